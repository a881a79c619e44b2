#!/usr/bin/env bash
# Late steps of 4 minetest servers beside 8 hogs in consecutive 10 s windows
# after a scheduler loads: does scx_tick's lateness grow with time since load?
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
win() { # label
  local a b; a=$(snap); measure_window mt_mark; b=$(snap)
  echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx $a -> $b"
}
for i in 1 2 3 4; do echo "load $(cat /proc/loadavg)"; done | head -1
for w in 1 2; do win "idle-$w"; done
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
for round in 1 2; do
  mt_fifo 50
  for w in 1 2 3 4 5 6; do win "fifo-r$round-w$w"; done
  mt_fifo 0
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  for w in 1 2 3 4 5 6; do win "scx-r$round-w$w"; done
  stop_sched
done
kill $HOGS; mt_stop_all
