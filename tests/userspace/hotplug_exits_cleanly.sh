#!/usr/bin/env bash
# CPU hotplug under --userspace: the kernel asks for a restart, which the
# userspace mode cannot do in-process; it says so in one line, exits
# non-zero, the kernel's scheduler runs again and no task is stuck.
# Catches: user-restartok
SCX_TICK_MODE=userspace
source "$(dirname "$0")/../lib.sh"
CPU=/sys/devices/system/cpu/cpu3/online
[[ -w $CPU ]] || skip "CPU 3 cannot be taken offline here"
CG=$(make_cgroup tick)
start_scx --tick-cgroup tick --tick-cpus 1,2
"$TICKLOAD" -n 2 --period-ms 50 --work-ms 5 --duration-s 8 --cgroup "$CG" >"$WORK/load" &
load=$!
sleep 1
echo 0 >"$CPU"
set +e; wait "$SCX_PID"; rc=$?; set -e
echo 1 >"$CPU"
((rc != 0)) || fail_catches user-restartok "exit status 0 after the kernel asked for a restart"
grep -q "cannot re-attach in the same process" "$WORK/scx.err" || fail "no clear message: $(grep -v "^ " "$WORK/scx.err" | grep -v "^$" | tail -8)"
(($(grep -c "error:" "$WORK/scx.err") == 1)) || fail "more than one error line: $(grep "error:" "$WORK/scx.err")"
wait_sched_state disabled 30 || fail "sched_ext state $(sched_state) after exit"
wait $load || fail "the tick workload did not finish under the kernel's scheduler"
note "$(grep "error:" "$WORK/scx.err"); tickload: $(grep total: "$WORK/load")"
