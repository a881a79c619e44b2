#!/usr/bin/env bash
# The watchdog can fire, and an ejection loses nothing: a SCHED_FIFO hog
# with RT throttling off starves every sched_ext task on its CPU (the
# kernel watchdog's own check-in too), so with --watchdog-ms 1000 the kernel
# ejects scx_tick within seconds. scx_tick says why, exits non-zero, still
# prints its exit summary and totals, and leaves sched_ext disabled.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us)
echo -1 >/proc/sys/kernel/sched_rt_runtime_us # no RT throttling (restored below)
start_scx --tick-cpus 1,2 --tick-cgroup tick --watchdog-ms 1000
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 20 --cgroup "$CG" >/dev/null 2>&1 &
load=$!
chrt -f 50 taskset -c 1 timeout 15 stress-ng --cpu 1 --timeout 15s >/dev/null 2>&1 &
hog=$!
for _ in $(seq 200); do kill -0 "$SCX_PID" 2>/dev/null || break; sleep 0.1; done
set +e; wait "$SCX_PID"; rc=$?; set -e
SCX_PID=""
kill "$hog" "$load" 2>/dev/null; wait "$hog" "$load" 2>/dev/null || true
echo "$rt" >/proc/sys/kernel/sched_rt_runtime_us
note "exit status $rc; $(grep -m1 -i 'stall\|EXIT' "$WORK/scx.err")"
((rc != 0)) || fail "scx_tick exited 0 although the kernel ejected it"
grep -qi "stall" "$WORK/scx.err" || fail "scx_tick did not say why it was ejected: $(tail -3 "$WORK/scx.err")"
grep -q "^scx_tick summary: tick:" "$WORK/scx.out" "$WORK/scx.err" || fail "no exit summary after the ejection"
grep -q "^scx_tick totals:" "$WORK/scx.out" "$WORK/scx.err" || fail "no totals line after the ejection"
wait_state disabled 10 || fail "sched_ext is $(state) after the ejection"
