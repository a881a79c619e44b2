#!/usr/bin/env bash
# SIGKILL of scx_tick: the kernel falls back to its default scheduler, the
# system keeps running (the tick runners keep ticking after the kill), and
# the next scx_tick start works: it schedules and counts a new workload.
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 8 --cgroup "$CG" --json >"$WORK/load" &
load=$!
start_scx --tick-cgroup tick
kill -KILL "$SCX_PID"
wait "$SCX_PID" 2>/dev/null || true
SCX_PID=""
wait_sched_state disabled 30 || fail "state $(sched_state) after SIGKILL: the kernel did not fall back"
wait $load || fail "tickload failed after the scheduler was killed"
ticks=$(json_field "$WORK/load" ticks)
note "after SIGKILL: state $(sched_state); the workload ran $ticks of its 320 ticks"
# the kill came within the first seconds of 8: most ticks ran after it
((ticks >= 288)) || fail "the runners stopped ticking after the kill: $ticks of 320 ticks"
start_scx --tick-cgroup tick
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 4 --cgroup "$CG" --json >"$WORK/load2" || fail "tickload failed under the restarted scx_tick"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "restart after SIGKILL: exit status $SCX_RC"
read_totals
own=$(json_field "$WORK/load2" ticks)
note "restarted: scx_tick counted $tot_ticks ticks, the new workload ran $own"
((tot_ticks * 10 >= own * 9)) || fail "the restarted scx_tick counted $tot_ticks of the new workload's $own ticks"
check_dmesg_clean
