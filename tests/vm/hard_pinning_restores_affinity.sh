#!/usr/bin/env bash
# --pin hard pins each runner to its home CPU (so it is never stolen), the
# homes spread over the group's CPUs, and every affinity is restored when
# scx_tick exits on SIGTERM.
# Catches: norestore nopin samehome
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
# the workloads outlive the checks however slow the guest (they are ended below)
"$TICKLOAD" -n 2 --work-ms 10 --duration-s 120 --cgroup "$CG" >"$WORK/load" &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 3 ]] && break; sleep 0.1; done
tids=$(ls /proc/$pid/task | grep -vx $pid)
before=$(for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort -u)
# a failed start (another scheduler runs) changes no affinity
start_scx --tick-cpus 1,2
# bounded: a second instance wrongly accepted would run until stopped
set +e; timeout 30 "$SCX" --tick-cpus 1,2 --tick-cgroup "tick,cpus=1" --pin hard 2>/dev/null; rc=$?; set -e
((rc != 0 && rc != 124)) || fail "second instance started"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "the first instance's exit status $SCX_RC (a second one's failed start must not disturb it)"
failed=$(for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort -u)
[[ "$failed" == "$before" ]] || fail "a failed start changed affinities: $failed"
start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1" --pin hard
# pinning scans every 200 ms: poll until it took effect (bounded)
during=""
for _ in $(seq 30); do
  during=$(for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort -u)
  [[ "$during" == 1 ]] && break
  sleep 0.1
done
[[ "$during" == 1 ]] || fail_catches nopin "runners not hard-pinned to CPU 1: $during"
# the CPU each runner actually last ran on (field 39 of /proc/TID/stat), sampled
ran=$(for _ in $(seq 20); do
  for t in $tids; do sed 's/.*) //' /proc/$t/stat 2>/dev/null | awk '{print $37}'; done
  sleep 0.1
done | sort -u | tr '\n' ' ')
note "CPUs the hard-pinned runners were seen on: $ran"
[[ "$ran" == "1 " ]] || fail "hard-pinned runners ran on CPUs $ran"
kill -0 $pid || fail "tickload ended early: $(cat "$WORK/load")"
kill $pid; wait $pid 2>/dev/null || true
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
# A group on two CPUs: each runner is homed on the CPU with the fewest
# homes, so three runners (and tickload's main thread, in the cgroup too)
# are pinned to both CPUs, not all to one.
start_scx --tick-cpus 1,2 --tick-cgroup tick --pin hard
"$TICKLOAD" -n 3 --work-ms 10 --duration-s 120 --cgroup "$CG" >"$WORK/load2" &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 4 ]] && break; sleep 0.1; done
tids=$(ls /proc/$pid/task | grep -vx $pid)
spread=""
for _ in $(seq 30); do
  spread=$(for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort -u | tr '\n' ' ')
  [[ "$spread" == "1 2 " ]] && break
  sleep 0.1
done
note "3 runners of a group on CPUs 1,2, hard-pinned to: $spread"
[[ "$spread" == "1 2 " ]] || fail_catches samehome "3 runners of a group on CPUs 1,2 pinned to $spread, not to both (homes not spread by load)"
stop_scx TERM
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
after=$(for t in $tids; do taskset -cp $t | sed 's/.*: //'; done | sort -u)
note "affinity before: $before, while pinned: $during, after SIGTERM: $after"
[[ "$after" == "$before" ]] || fail_catches norestore "affinity not restored: $after, was $before"
kill $pid; wait $pid 2>/dev/null || true
read_totals
((tot_dispatch_stolen == 0)) || fail "$tot_dispatch_stolen steals of hard-pinned runners"
