#!/usr/bin/env bash
# Probe (issue 27): is a runner's timer delivered later under scx_tick than
# under SCHED_FIFO? hrtimer_start/expire and local timer interrupts beside the
# runners' wake-ups; the standard headline's load; FIFO and scx_tick in turns.
source /work/main/tests/lib.sh
OUT=/tmp/p27h; mkdir -p "$OUT"
CG=$(make_cgroup tick)
ARGS=(-n 4 --period-ms 50 --work-ms 8 --jitter-ms 2 --spike-ms 40 --spike-pct 1 --seed 1 --duration-s 8 --cgroup "$CG" --json)
cell() { # name policy-args...
  local name=$1; shift
  stress-ng --cpu 8 --timeout 10s --metrics-brief >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  ( end=$((SECONDS + 9)); while ((SECONDS < end)); do hackbench -p -g 2 -f 5 -l 50 >/dev/null 2>&1; done ) &
  local hb=$!
  sleep 0.5
  if [[ ${CYC:-0} == 1 ]]; then
    # the bench headline's latency probe in the tick group (probe 11)
    local cpol=(); [[ $name == fifo-* ]] && cpol=(--policy fifo -p 50)
    ( sleep 1; echo "$BASHPID" >"$CG/cgroup.procs"; exec cyclictest -q -D 5 -i 1000 "${cpol[@]}" ) >"$OUT/$name.cyc" 2>&1 &
  fi
  "$TICKLOAD" "${ARGS[@]}" "$@" --ticks-log "$OUT/$name.ticks" >"$OUT/$name.json" || echo "tickload failed $name"
  wait $hog $hb 2>/dev/null
  echo "cell $name done" >&2
}
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
echo mono >$T/trace_clock
echo 16384 >$T/buffer_size_kb
cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$OUT/clocksource"
grep -i "hres\|resolution" /proc/timer_list | sort | uniq -c | head >"$OUT/timer_list" || true
for e in sched/sched_wakeup sched/sched_switch timer/hrtimer_start timer/hrtimer_expire_entry irq_vectors/local_timer_entry irq_vectors/reschedule_entry irq_vectors/call_function_single_entry; do
  echo 1 >$T/events/$e/enable || echo "no event $e"
done
traced() { # name cell-args...
  local name=$1; shift
  echo >$T/trace; echo 1 >$T/tracing_on
  cell "$name" "$@"
  echo 0 >$T/tracing_on
  cat $T/trace >"$OUT/$name.trace"
  grep -c . "$OUT/$name.trace" >&2
}
for r in $(seq ${ROUNDS:-3}); do
  traced fifo-$r --policy fifo --fifo-prio 50
  for v in ${VARIANTS:-main proto proto-t0.5}; do
    extra=(); [[ $v == *-t0.5 ]] && extra=(--steal-threshold-ms 0.5)
    SCX=/work/main/results/p27/scx_tick.${v%%-*} start_scx --tick-cgroup tick "${extra[@]}"
    traced $v-$r
    stop_scx INT
  done
done
cat "$OUT/clocksource" "$OUT/timer_list"
echo "=== tar"; tar cz -C /tmp p27h | base64 -w0; echo; echo done
