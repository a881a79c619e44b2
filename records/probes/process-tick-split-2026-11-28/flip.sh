#!/usr/bin/env bash
# Is the process tick bistable? Loads of scx_tick beside 4 minetest servers
# and 8 hogs, with or without one python3 run reading the stats file 2 s
# after the load (what the windows/order probes did, which counted 4-5
# ticks per step where the bench and the starve probe counted 1); each
# load prints its group's ticks/s second by second and the late steps.
set -uo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/probe.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
BIN="$ROOT/target/release"
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || { echo "no steps s$i"; exit 1; }; done
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
for trial in plain snap plain snap plain snap; do
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  [[ $trial == snap ]] && tail -1 "$WORK/scx.jsonl" | python3 -c 'import json,sys; g=json.loads(sys.stdin.read())["groups"]["mt"]; print(g["ticks"])' >/dev/null
  from=$(mt_mark); sleep 14; to=$(mt_mark)
  series=$(python3 -c '
import json,sys
print(" ".join(str(round(json.loads(l)["groups"]["mt"]["ticks_per_s"])) for l in open(sys.argv[1]) if l.strip()))' "$WORK/scx.jsonl")
  echo "$trial: late $(mt_late "$from" "$to" 50) ticks/s by second: $series"
  stop_sched
done
kill $HOGS; mt_stop_all
