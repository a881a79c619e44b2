#!/usr/bin/env bash
# Does a spell under EEVDF beside the hogs (the servers starved, as in the
# bench's eevdf cell) change how scx_tick counts the servers' ticks after?
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
rates() { local r; r=$(group_rates "$WORK/scx.jsonl" mt 2>/dev/null) || r="- -"; echo "$r"; }
win() { measure_window mt_mark; echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx(ticks/s misses/s since load) $(rates)"; }
scx() { # label
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  for w in 1 2; do win "$1-w$w"; done
  stop_sched
}
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
scx fresh
SECS=30; win eevdf; SECS=10
scx after-eevdf
scx again
kill $HOGS; mt_stop_all
