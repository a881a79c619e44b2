#!/usr/bin/env bash
# Probe (issue 27): where the hogs' time goes at the capacity cell's 8
# runners (4 vCPUs, 8 CPU hogs, 8 runners x 12 ms per 50 ms): each CPU's
# idle, user and system time (/proc/stat) over tickload's window, under
# SCHED_FIFO and scx_tick in turns, ROUNDS rounds (default 3), with the
# BPF programs' run time (kernel.bpf_stats_enabled).
source /work/main/tests/lib.sh
OUT=/tmp/capidle; mkdir -p "$OUT"
CG=$(make_cgroup tick)
N=${RUNNERS:-8}
ARGS=(-n "$N" --period-ms 50 --work-ms 12 --seed 1 --duration-s 8 --cgroup "$CG" --json)
cell() { # name, tickload args
  local name=$1; shift
  stress-ng --cpu 8 --timeout 10s --metrics-brief >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  sleep 0.5
  bpftool -j prog show >"$OUT/$name.before.json"
  grep '^cpu' /proc/stat >"$OUT/$name.stat0"
  "$TICKLOAD" "${ARGS[@]}" "$@" >"$OUT/$name.json" || echo "tickload failed $name"
  grep '^cpu' /proc/stat >"$OUT/$name.stat1"
  bpftool -j prog show >"$OUT/$name.after.json"
  wait $hog 2>/dev/null
  echo "cell $name done" >&2
}
sysctl -w kernel.bpf_stats_enabled=1
for r in $(seq "${ROUNDS:-3}"); do
  cell fifo-$r --policy fifo --fifo-prio 50
  SCX=${SCX_BIN:-/work/main/target/release/scx_tick} start_scx --tick-cgroup tick
  cell tick-$r
  cp "$STATS_JSON" "$OUT/tick-$r.stats.jsonl" 2>/dev/null || true
  stop_scx INT
done
echo "=== tar"; tar cz -C /tmp capidle | base64 -w0; echo; echo done
