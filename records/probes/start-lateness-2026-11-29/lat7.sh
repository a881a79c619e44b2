#!/usr/bin/env bash
# Probe (issue 27): where the standard headline's start lateness goes.
# 4 runners x 8 ms (+-2) per 50 ms beside 8 hogs + hackbench, cyclictest in
# the tick group; FIFO and scx_tick variants in turns, 3 rounds.
source /work/main/tests/lib.sh
OUT=/tmp/p27g; mkdir -p "$OUT"
CG=$(make_cgroup tick)
ARGS=(-n 4 --period-ms 50 --work-ms 8 --jitter-ms 2 --spike-ms 40 --spike-pct 1 --seed 1 --duration-s 8 --cgroup "$CG" --json)
cell() { # name cyc(0/1) policy-args...
  local name=$1 cyc=$2; shift 2
  stress-ng --cpu 8 --timeout 10s --metrics-brief >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  ( end=$((SECONDS + 9)); while ((SECONDS < end)); do hackbench -p -g 2 -f 5 -l 50 >/dev/null 2>&1; done ) &
  local hb=$!
  sleep 0.5
  local cy=""
  if ((cyc)); then
    ( sleep 1; echo "$BASHPID" >"$CG/cgroup.procs"
      if [[ " $* " == *fifo* ]]; then exec cyclictest -q -D 5 -i 1000 --policy fifo -p 50; fi
      exec cyclictest -q -D 5 -i 1000 ) >"$OUT/$name.cyc" 2>&1 &
    cy=$!
  fi
  "$TICKLOAD" "${ARGS[@]}" "$@" --ticks-log "$OUT/$name.ticks" >"$OUT/$name.json" || echo "tickload failed $name"
  wait $hog $hb $cy 2>/dev/null
  echo "cell $name done" >&2
}
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
echo mono >$T/trace_clock
echo 4096 >$T/buffer_size_kb
echo 'comm ~ "Tick Runner*"' >$T/events/sched/sched_wakeup/filter
echo 'next_comm ~ "Tick Runner*" || prev_comm ~ "Tick Runner*"' >$T/events/sched/sched_switch/filter
echo 1 >$T/events/sched/sched_wakeup/enable
echo 1 >$T/events/sched/sched_switch/enable
traced() { # name cell-args...
  local name=$1; shift
  echo >$T/trace; echo 1 >$T/tracing_on
  cell "$name" "$@"
  echo 0 >$T/tracing_on
  cat $T/trace >"$OUT/$name.trace"
}
for r in 1 2; do
  traced fifo4-$r 0 --policy fifo --fifo-prio 50
  start_scx --tick-cgroup tick
  traced scx4-$r 0
  stop_scx INT
  cp "$STATS_JSON" "$OUT/scx4-$r.stats"
done
python3 /work/main/results/p27/an.py "$OUT"; echo "=== tar"; tar cz -C /tmp p27g | base64 -w0; echo; echo done
