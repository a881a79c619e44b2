#!/usr/bin/env bash
# Probe (issue 27): where the standard headline's start lateness goes.
# 4 runners x 8 ms (+-2) per 50 ms beside 8 hogs + hackbench, cyclictest in
# the tick group; FIFO and scx_tick variants in turns, 3 rounds.
source /work/main/tests/lib.sh
OUT=/tmp/p27f; mkdir -p "$OUT"
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
for r in 1 2; do
  for n in 3 4; do
    ARGS[1]=$n
    cell fifo$n-$r 0 --policy fifo --fifo-prio 50
    start_scx --tick-cgroup tick
    cell scx$n-$r 0
    stop_scx INT
    cp "$STATS_JSON" "$OUT/scx$n-$r.stats"
  done
done
python3 /work/main/results/p27/an.py "$OUT"; echo "=== tar"; tar cz -C /tmp p27f | base64 -w0; echo; echo done
