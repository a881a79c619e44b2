#!/usr/bin/env bash
# Probe (issue 27): how often the capacity cell's CPU hogs move between
# CPUs, and what each BPF callback costs, at 8 runners x 12 ms per 50 ms
# beside 8 hogs (4 vCPUs): SCHED_FIFO and the scx_tick builds of VARIANTS
# (NAME=PATH ...; default main=target/release/scx_tick) in turns, ROUNDS
# rounds (default 3). Per cell: the hogs' bogo-ops, their migrations
# (se.nr_migrations over the window), context switches, the runners'
# misses and each tick_* program's run time and count.
source /work/main/tests/lib.sh
OUT=/tmp/hogmoves; mkdir -p "$OUT"
CG=$(make_cgroup tick)
N=${RUNNERS:-8}
ARGS=(-n "$N" --period-ms 50 --work-ms 12 --seed 1 --duration-s 8 --cgroup "$CG" --json)
hogsnap() { # name: every stress-ng worker's migrations and switches
  local p
  for p in $(pgrep stress-ng); do
    awk -v p="$p" '/se.nr_migrations|^nr_switches/ { printf "%s %s %s\n", p, $1, $NF }' "/proc/$p/sched" 2>/dev/null || true
  done >"$OUT/$1"
}
cell() { # name, tickload args
  local name=$1; shift
  stress-ng --cpu 8 --timeout 30s --metrics-brief >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  sleep 0.5
  bpftool -j prog show >"$OUT/$name.before.json"
  hogsnap "$name.hogs0"
  "$TICKLOAD" "${ARGS[@]}" "$@" >"$OUT/$name.json" || echo "tickload failed $name"
  hogsnap "$name.hogs1"
  bpftool -j prog show >"$OUT/$name.after.json"
  kill -INT $hog; wait $hog 2>/dev/null || true
  echo "cell $name done" >&2
}
sysctl -w kernel.bpf_stats_enabled=1
read -ra VARS <<<"${VARIANTS:-main=/work/main/target/release/scx_tick}"
for r in $(seq "${ROUNDS:-3}"); do
  cell fifo-$r --policy fifo --fifo-prio 50
  for v in "${VARS[@]}"; do
    SCX=${v#*=} start_scx --tick-cgroup tick
    cell "${v%%=*}-$r"
    cp "$STATS_JSON" "$OUT/${v%%=*}-$r.stats.jsonl" 2>/dev/null || true
    stop_scx INT
  done
done
echo "=== tar"; tar cz -C /tmp hogmoves | base64 -w0; echo; echo done
