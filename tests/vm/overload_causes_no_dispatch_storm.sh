#!/usr/bin/env bash
# Tick runners claiming far more than their tick CPUs (plus CPU hogs) are
# dispatched a few times per tick, not in a storm of self-preemptions, and
# the admission check warns about the overload.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup world)
stress-ng --cpu 6 --timeout 30s >/dev/null 2>&1 &
start_scx --tick-cpus 1,2 --tick-cgroup world,period=50,deadline=40
"$TICKLOAD" -n 4 --work-ms 18 --duration-s 6 --cgroup "$CG" >"$WORK/load" &
load=$!
"$TICKLOAD" -n 1 --work-ms 45 --duration-s 6 --cgroup "$CG" >/dev/null
wait $load || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
runs=$((tot_dispatch_local + tot_dispatch_global + tot_dispatch_stolen))
note "ticks=$tot_ticks runner dispatches=$runs; $(grep total: "$WORK/load")"
((tot_ticks > 0)) || fail "no ticks"
((runs <= 10 * tot_ticks)) || fail "$runs runner dispatches for $tot_ticks ticks: a dispatch storm"
grep -q "admission: tick runners may claim" "$WORK/scx.err" || fail "no admission warning for 5.6 CPUs of claims on 2 tick CPUs"
check_dmesg_clean
