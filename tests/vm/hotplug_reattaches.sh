#!/usr/bin/env bash
# CPU hotplug makes the kernel ask for a restart: scx_tick re-attaches by
# itself, with tick CPUs chosen again from the CPUs online, and keeps counting;
# with the user's own CPU lists, a tick CPU going offline is left out until it
# returns, and then the user's lists apply again.
# Catches: staleplan
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
online() { echo "$2" >/sys/devices/system/cpu/cpu$1/online; }
# scx_tick kept counting across the restarts: at least half the ticks the
# workload itself ran. The ticks between detach and re-attach are lost, and
# how many is restart time, which this test does not bound (69-80 % counted
# over 14 runs on a 2-core TCG host; a 70 % bound failed once when the host
# was slow). Counting that stopped at the first restart keeps about a third.
counted_most_ticks() {
  read_totals
  local own
  own=$(json_field "$WORK/load" ticks)
  note "$1: scx_tick counted $tot_ticks ticks, the workload ran $own"
  ((tot_ticks * 2 >= own)) || fail "$1: scx_tick counted $tot_ticks of the workload's $own ticks (< 50 %)"
}
# the tick CPUs of the latest attach are $1 (a list as scx_tick prints it)
chosen() {
  local last
  last=$(grep 'tick CPUs:' "$WORK/scx.err" | tail -1)
  note "$2: $last"
  [[ $last == *"tick CPUs: $1" ]] || fail_catches staleplan "$2: tick CPUs not chosen again from the CPUs online (want $1): $last"
}
start_scx --tick-cgroup tick # auto choice on 4 CPUs: every one but CPU 0
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 20 --cgroup "$CG" --json >"$WORK/load" &
load=$!
online 3 0; reattached 1; chosen "[1, 2]" "tick CPU 3 offline"
online 3 1; reattached 2; chosen "[1, 2, 3]" "CPU 3 back"
online 2 0; reattached 3; chosen "[1, 3]" "tick CPU 2 offline"
online 2 1; reattached 4; chosen "[1, 2, 3]" "CPU 2 back"
wait $load || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
counted_most_ticks "across 4 restarts"

# the user's lists: tick CPUs 1,2, the group homed on CPU 2 only
start_scx --tick-cpus 1,2 --tick-cgroup tick,cpus=2
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 10 --cgroup "$CG" --json >"$WORK/load" &
load=$!
online 2 0; reattached 1
grep 'tick CPUs:' "$WORK/scx.err" | tail -1 | grep -q '\[1\]' || fail "offline tick CPU 2 still used: $(grep 'tick CPUs:' "$WORK/scx.err" | tail -1)"
grep 'home CPUs' "$WORK/scx.err" | tail -1 | grep -q '\[1\]' || fail "group not re-homed on CPU 1"
note "tick CPU 2 offline: $(grep 'after hotplug' "$WORK/scx.err" | tail -2 | tr '\n' ' ')"
online 2 1; reattached 2
grep 'tick CPUs:' "$WORK/scx.err" | tail -1 | grep -q '\[1, 2\]' || fail "the user's tick CPUs not restored"
grep 'home CPUs' "$WORK/scx.err" | tail -1 | grep -q '\[2\]' || fail "the user's group CPUs not restored"
wait $load || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
counted_most_ticks "user's lists, across 2 restarts"
check_dmesg_clean
