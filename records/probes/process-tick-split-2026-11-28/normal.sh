#!/usr/bin/env bash
# starve.sh's first load (one tick per step there), traced: which threads'
# wake-ups start the ticks when scx_tick counts one per step?
set -uo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/probe.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
BIN="$ROOT/target/release"
TRACEREPLAY="$BIN/tracereplay"
SECS=10
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || { echo "no steps s$i"; exit 1; }; done
rates() { local r; r=$(group_rates "$WORK/scx.jsonl" mt 2>/dev/null) || r="- -"; echo "$r"; }
win() { measure_window mt_mark; echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx(ticks/s misses/s since load) $(rates)"; }
scx() { # label
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" --trace-decisions "$WORK/$1.trace" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  for w in 1 2; do win "$1-w$w"; done
  stop_sched
  for p in "${MT_PIDS[@]}"; do ps -L -o tid=,comm= -p "$p"; done >"$WORK/tids"
  "$TRACEREPLAY" --wakes "$WORK/$1.trace" 2>/dev/null | python3 -c '
import sys, collections
comm = {k: v.strip() for k, v in (l.split(None, 1) for l in open(sys.argv[1]) if l.strip())}
starts = collections.Counter(); wakes = collections.Counter(); helpers = collections.Counter(); fresh = collections.Counter()
for l in sys.stdin:
    f = l.split()
    if len(f) < 6 or f[0] != "wake": continue
    name = comm.get(f[1], "?")
    wakes[name] += 1
    if f[4] != "0": starts[name] += 1
    if "helper" in f and f[f.index("helper") + 1] == "1": helpers[name] += 1
    if "fresh" in f and f[f.index("fresh") + 1] == "1": fresh[name] += 1
for what, c in (("wakes", wakes), ("tick starts", starts), ("as helper", helpers), ("ended a quiet spell", fresh)):
    print(" ", what, dict(sorted(c.items())))' "$WORK/tids"
}
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
scx fresh
kill $HOGS; mt_stop_all
