#!/usr/bin/env bash
# SIGKILL of scx_tick: the kernel falls back to its default scheduler, the
# system keeps running (the tick runners keep ticking), and the next scx_tick
# start works.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 8 --cgroup "$CG" >"$WORK/load" &
load=$!
start_scx --tick-cgroup tick
kill -KILL "$SCX_PID"
wait "$SCX_PID" 2>/dev/null || true
SCX_PID=""
wait_state disabled 30 || fail "state $(state) after SIGKILL: the kernel did not fall back"
wait $load || fail "tickload failed after the scheduler was killed"
note "after SIGKILL: state $(state); $(grep total: "$WORK/load")"
grep -q "ticks=[1-9]" "$WORK/load" || fail "the runners stopped ticking"
start_scx --tick-cgroup tick
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "restart after SIGKILL: exit status $SCX_RC"
check_dmesg_clean
