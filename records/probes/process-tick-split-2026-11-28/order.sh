#!/usr/bin/env bash
# Ticks per step of 4 minetest servers beside 8 hogs under scx_tick, before
# and after the servers' threads were SCHED_FIFO for a while.
set -uo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/probe.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
BIN="$ROOT/target/release"
SECS=10
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || { echo "no steps s$i"; exit 1; }; done
snap() { tail -1 "$WORK/scx.jsonl" 2>/dev/null | python3 -c 'import json,sys; g=json.loads(sys.stdin.read())["groups"]["mt"]; print(g["ticks"], g["misses"])' 2>/dev/null || echo "0 0"; }
win() { local a b; a=$(snap); measure_window mt_mark; b=$(snap); echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx $a -> $b"; }
policies() { for p in "${MT_PIDS[@]}"; do ps -L -o cls=,comm= -p "$p"; done | sort | uniq -c | tr '\n' ';'; echo; }
scx() { # label
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  for w in 1 2 3; do win "$1-w$w"; done
  stop_sched
}
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
echo "threads: $(policies)"
scx first
mt_fifo 50; win fifo; mt_fifo 0
echo "threads after fifo: $(policies)"
scx after-fifo
kill $HOGS; mt_stop_all
