#!/usr/bin/env bash
# A runner that a SCHED_FIFO task preempts goes back to scx_tick and runs
# elsewhere: when a higher class takes a CPU, ops.cpu_release re-enqueues
# what that CPU's local queue holds (the preempted runner is put back at
# its head), instead of leaving it there until the FIFO task sleeps.
# Two runners of 15 ms per 50 ms tick homed on tick CPUs 1 and 2 (CPUs 0
# and 3 idle), and a SCHED_FIFO task on CPU 1 that works 30 ms every
# 100 ms. From the workload's side: few of the runners' ticks stretch by
# more than 10 ms past their work (a runner left behind a burst waits up
# to 30 ms).
# Catches: norelease
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup tick
"$TICKLOAD" -n 2 --work-ms 15 --duration-s 10 --cgroup "$CG" --json --ticks-log "$WORK/load.ticks" >"$WORK/load.json" &
load=$!
taskset -c 1 "$TICKLOAD" -n 1 --policy fifo --fifo-prio 50 --work-ms 30 --period-ms 100 --duration-s 10 --json >"$WORK/fifo.json" &
fifo=$!
wait $load || fail "tickload failed"
wait $fifo || fail "the SCHED_FIFO tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
python3 - "$WORK/load.ticks" <<'PY' >"$WORK/figures"
import sys
ticks = held = worst = 0
for l in open(sys.argv[1]):
    _, due, begin, end = l.rstrip('\n').split('\t')
    stretch = int(end) - int(begin) - 15_000_000
    ticks += 1
    held += stretch > 10_000_000
    worst = max(worst, stretch)
print(ticks, held, worst // 1_000_000)
PY
read -r ticks held worst <"$WORK/figures"
note "runners: $ticks ticks, $held stretched more than 10 ms past their 15 ms of work (worst +$worst ms); per CPU $(grep -o '"cpus":{[^}]*}' "$WORK/load.json" | tr '\n' ' '); the FIFO task $(json_field "$WORK/fifo.json" ticks) bursts"
((ticks >= 300)) || fail "the runners ran only $ticks ticks"
((held * 20 <= ticks)) || fail_catches norelease "$held of $ticks runner ticks stretched more than 10 ms (worst +$worst ms): left behind the SCHED_FIFO task on its CPU"
check_dmesg_clean
