#!/usr/bin/env bash
# vm/steal_timer_takes_a_late_runner's load, traced: for each waiting tick
# due in a spiking tick of the lead (the wide count, README.md) that started
# more than 10 ms late, when did the waiting runner wake (tracefs
# sched_wakeup) and when and where did it first run (sched_switch)?
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
echo mono >$T/trace_clock
echo 32768 >$T/buffer_size_kb
for e in sched/sched_wakeup sched/sched_switch; do echo 1 >$T/events/$e/enable; done
LEAD=$(make_cgroup lead) WAITG=$(make_cgroup wait) PIN=$(make_cgroup pin)
for r in $(seq "${ROUNDS:-2}"); do
  start_scx --tick-cpus 1,2 --tick-cgroup "lead,cpus=1,deadline=35" --tick-cgroup "wait,cpus=1,deadline=100" \
    --tick-cgroup "pin,cpus=2,deadline=10"
  echo >$T/trace; echo 1 >$T/tracing_on
  taskset -c 1 "$TICKLOAD" -n 1 --work-ms 2 --spike-ms 40 --spike-pct 10 --seed 7 --phase-ms 0 --duration-s 15 \
    --cgroup "$LEAD" --json --ticks-log "$WORK/lead.ticks" >"$WORK/lead.json" &
  lead=$!
  taskset -c 1,2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 1 --duration-s 15 \
    --cgroup "$WAITG" --json --ticks-log "$WORK/wait.ticks" >"$WORK/wait.json" &
  waiter=$!
  taskset -c 2 "$TICKLOAD" -n 1 --work-ms 2 --phase-ms 0 --duration-s 15 --cgroup "$PIN" --json >"$WORK/pinned.json" &
  pinned=$!
  sleep 2
  wtid=$(for t in /proc/$waiter/task/*; do [[ "$(cat $t/comm)" == "Tick Runner #0" ]] && basename $t; done)
  ltid=$(for t in /proc/$lead/task/*; do [[ "$(cat $t/comm)" == "Tick Runner #0" ]] && basename $t; done)
  wait $lead $waiter $pinned
  echo 0 >$T/tracing_on
  stop_scx INT
  grep -E "sched_wakeup: .*pid=($wtid|$ltid) |sched_switch: .*next_pid=($wtid|$ltid) " $T/trace >"$WORK/trace"
  python3 "$HERE/late.py" "$WORK/lead.ticks" "$WORK/wait.ticks" "$WORK/trace" "$wtid" "$ltid" | sed "s/^/# round $r: /"
done
