#!/usr/bin/env bash
# Tick runners claiming far more than their tick CPUs (plus CPU hogs) are
# dispatched a few times per tick, not in a storm of self-preemptions, and
# the admission check warns about the overload. Both with homes and with
# --no-work-stealing's one shared queue: there, a runner re-queued by a
# CPU once kicked that same CPU, and the two runners it held handed it
# back and forth every few microseconds (about 270 dispatches per tick).
# Catches: selfkick
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup world)
stress-ng --cpu 6 --timeout 40s >/dev/null 2>&1 &
for mode in homes shared; do
  flags=()
  [[ $mode == shared ]] && flags=(--no-work-stealing)
  start_scx --tick-cpus 1,2 --tick-cgroup world,period=50,deadline=40 "${flags[@]}"
  "$TICKLOAD" -n 4 --work-ms 18 --duration-s 6 --cgroup "$CG" >"$WORK/load" &
  load=$!
  "$TICKLOAD" -n 1 --work-ms 45 --duration-s 6 --cgroup "$CG" >/dev/null
  wait $load || fail "tickload failed"
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
  read_totals
  runs=$((tot_dispatch_local + tot_dispatch_global + tot_dispatch_stolen))
  note "$mode: ticks=$tot_ticks runner dispatches=$runs; $(grep total: "$WORK/load")"
  # the workloads' 600 ticks (5 runners x 6 s / 50 ms; counted 613-623),
  # 1.1-1.7 dispatches each (a storm: 77,529 for 681)
  ((tot_ticks >= 540 && tot_ticks <= 690)) || fail "$mode: $tot_ticks ticks counted where the workloads ran 600 (allowed: 540-690)"
  ((runs <= 4 * tot_ticks)) || fail "$mode: $runs runner dispatches for $tot_ticks ticks: a dispatch storm (allowed: 4 per tick)"
  grep -q "admission: tick runners may claim" "$WORK/scx.err" || fail "$mode: no admission warning for 5.6 CPUs of claims on 2 tick CPUs"
done
check_dmesg_clean
