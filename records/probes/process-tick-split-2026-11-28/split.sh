#!/usr/bin/env bash
# Which threads start the extra ticks when scx_tick counts 4-5 ticks per
# minetest step (seen in 2 of 5 guests)? Servers started afresh up to 4
# times; each time scx_tick traced for 12 s beside 8 hogs: ticks per step,
# and tick starts by thread name (tracereplay --wakes).
set -uo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/probe.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
BIN="$ROOT/target/release"
for attempt in 1 2 3 4; do
  for i in 1 2 3 4; do mt_start a${attempt}s$i 12 50; done
  for i in 1 2 3 4; do mt_wait_steps a${attempt}s$i 40 240 || { echo "no steps"; exit 1; }; done
  stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
  HOGS=$!
  sleep 2
  for p in "${MT_PIDS[@]}"; do ps -L -o tid=,comm= -p "$p"; done >"$WORK/tids"
  rm -f "$WORK/t.trace"
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" --trace-decisions "$WORK/t.trace" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  from=$(mt_mark); sleep 12; to=$(mt_mark)
  stop_sched
  kill $HOGS
  late=$(mt_late "$from" "$to" 50)
  "$TRACEREPLAY" --wakes "$WORK/t.trace" 2>/dev/null | python3 -c '
import sys, collections
comm = dict(l.split(None, 1) for l in open(sys.argv[1]) if l.strip())
comm = {k: v.strip() for k, v in comm.items()}
starts = collections.Counter(); wakes = collections.Counter()
helpers = collections.Counter()
for l in sys.stdin:
    f = l.split()
    if len(f) < 6 or f[0] != "wake": continue
    name = comm.get(f[1], "?")
    wakes[name] += 1
    if f[4] != "0": starts[name] += 1
    if "helper" in f and f[f.index("helper") + 1] == "1": helpers[name] += 1
print("wakes", dict(wakes)); print("tick starts", dict(starts)); print("as helper", dict(helpers))' "$WORK/tids" || true
  python3 - "$WORK/scx.jsonl" "$late" <<'PY'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][1:-1]
a, b = ls[0]["groups"]["mt"], ls[-1]["groups"]["mt"]
dt = ls[-1]["uptime_s"] - ls[0]["uptime_s"]
steps, late, secs, work = sys.argv[2].split()
sps = int(steps) / float(secs)
print(f"ticks per step {(b['ticks'] - a['ticks']) / dt / sps:.2f}, misses/s {(b['misses'] - a['misses']) / dt:.2f}, late steps {late} of {steps} ({100 * int(late) / int(steps):.2f} %), late/s {int(late) / float(secs):.2f}")
PY
  echo "attempt $attempt done"
  mt_stop_all
done
