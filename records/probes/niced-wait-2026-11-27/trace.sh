#!/usr/bin/env bash
# The load of vm/niced_work_is_not_starved with sched_switch/sched_wakeup
# traced: each long wait of the nice-19 probe's runner thread, what it did
# (ran and was preempted, or waited queued) and what ran on each CPU meanwhile.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
CG=$(make_cgroup tick)
T=/sys/kernel/tracing
round() {
  start_scx --tick-cgroup tick
  echo 0 >$T/tracing_on; echo >$T/trace; echo 40000 >$T/buffer_size_kb
  echo 1 >$T/events/sched/sched_switch/enable; echo 1 >$T/events/sched/sched_wakeup/enable
  echo 1 >$T/tracing_on
  stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local hogs=$!
  nice -n 19 stress-ng --cpu 1 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local niced=$!
  nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json >"$WORK/probe.json" &
  local probe=$!
  # more nice-19 sleepers (EXTRA of them, EXTRA_PERIOD ms): more pushes of the fair queue's clock
  for ((k = 0; k < ${EXTRA:-0}; k++)); do
    nice -n 19 "$TICKLOAD" -n 1 --work-ms 0.2 --period-ms ${EXTRA_PERIOD:-20} --duration-s ${EXTRA_S:-14} --json >/dev/null &
  done
  "$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load"
  wait $probe $hogs $niced
  sleep 1
  echo 0 >$T/tracing_on
  python3 -c "
import json; p=json.load(open('$WORK/probe.json'))['total']
print('probe', p['ticks'], 'ticks, start lateness max', round(p['lateness_max_ms']), 'stall', round(p['stall_max_ms']))"
  stop_scx INT
  python3 "$HERE/waits.py" $T/trace
}
for i in $(seq ${ROUNDS:-6}); do round; done
