#!/usr/bin/env bash
# order3's first load on a debug build (bpf_printk at every place a tick is
# counted): which path starts the extra ticks of the split mode, by thread.
set -uo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/probe.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
BIN="$ROOT/target/release"
SECS=10
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || { echo "no steps s$i"; exit 1; }; done
snap() { tail -1 "$WORK/scx.jsonl" 2>/dev/null | python3 -c 'import json,sys; g=json.loads(sys.stdin.read())["groups"]["mt"]; print(g["ticks"], g["misses"])' 2>/dev/null || echo "0 0"; }
win() { local a b; a=$(snap); measure_window mt_mark; b=$(snap); echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx $a -> $b"; }
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
"$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" >"$WORK/scx.log" 2>&1 &
SCHED_PID=$!
wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
cat /sys/kernel/tracing/trace_pipe >"$WORK/pipe" &
PIPE=$!
sleep 2
win w1
kill $PIPE
stop_sched
for p in "${MT_PIDS[@]}"; do ps -L -o tid=,comm= -p "$p"; done >"$WORK/tids"
python3 - "$WORK/tids" "$WORK/pipe" <<'PY'
import sys, collections, re
comm = {k: v.strip() for k, v in (l.split(None, 1) for l in open(sys.argv[1]) if l.strip())}
c = collections.Counter()
for l in open(sys.argv[2], errors="replace"):
    m = re.search(r"scxdbg (\w) (\d+)", l)
    if m:
        c[(m.group(1), comm.get(m.group(2), "-" if m.group(2) == "0" else "other"))] += 1
print("  ticks started, by path (W wake-up, O roll-over, T thread wake, N new/runnable, R replenish of a process tick, r of a thread tick) and thread:")
for k, v in sorted(c.items(), key=lambda kv: -kv[1]):
    print("   ", k, v)
PY
kill $HOGS; mt_stop_all
