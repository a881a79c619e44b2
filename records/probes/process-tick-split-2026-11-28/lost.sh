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
TRACEREPLAY="$BIN/tracereplay"
SECS=10
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || { echo "no steps s$i"; exit 1; }; done
snap() { tail -1 "$WORK/scx.jsonl" 2>/dev/null | python3 -c 'import json,sys; g=json.loads(sys.stdin.read())["groups"]["mt"]; print(g["ticks"], g["misses"])' 2>/dev/null || echo "0 0"; }
win() { local a b; a=$(snap); measure_window mt_mark; b=$(snap); echo "$1 $(mt_late "$WIN_FROM" "$WIN_TO" 50) scx $a -> $b clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"; }
policies() { for p in "${MT_PIDS[@]}"; do ps -L -o cls=,comm= -p "$p"; done | sort | uniq -c | tr '\n' ';'; echo; }
scx() { # label
  "$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/scx.jsonl" --trace-decisions "$WORK/$1.trace" >"$WORK/scx.log" 2>&1 &
  SCHED_PID=$!
  wait_sched_state enabled 120 "$SCHED_PID" || { echo "scx_tick did not load"; tail "$WORK/scx.log"; }
  sleep 2
  for w in 1; do win "$1-w$w"; done
  stop_sched
  echo "  $(grep -m1 "decision trace" "$WORK/scx.log")"
  for p in "${MT_PIDS[@]}"; do ps -L -o tid=,comm= -p "$p"; done >"$WORK/tids"
  "$TRACEREPLAY" --wakes "$WORK/$1.trace" 2>/dev/null | python3 -c '
import sys, collections
comm = {k: v.strip() for k, v in (l.split(None, 1) for l in open(sys.argv[1]) if l.strip())}
last = {}      # tid -> time of its previous wake
prev_any = {}  # server (by tgid-less guess: previous event overall) -> name
gaps = []; own = []; between = collections.Counter(); n = 0
t0 = t1 = None; ev = []
for l in sys.stdin:
    f = l.split()
    if len(f) < 6 or f[0] != "wake": continue
    tid, now = f[1], int(f[2]); name = comm.get(tid, "?")
    t0 = now if t0 is None else t0; t1 = now
    ev.append((now, tid, name, f))
for i, (now, tid, name, f) in enumerate(ev):
    if name == "Server" and "fresh" in f and f[f.index("fresh") + 1] == "1":
        q = int(f[f.index("quiet") + 1])
        gaps.append((now - q) / 1e6)
        if tid in last: own.append((now - last[tid]) / 1e6)
        n += 1
    last[tid] = now
def pct(xs, p): xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else 0
print(f"  span {(t1 - t0) / 1e9:.1f} s; Server fresh wake-ups {n} ({n / ((t1 - t0) / 1e9):.1f}/s)")
print("  quiet before them, ms: p10 %.1f p50 %.1f p90 %.1f" % (pct(gaps, .1), pct(gaps, .5), pct(gaps, .9)))
print("  since the same thread woke before, ms: p10 %.1f p50 %.1f p90 %.1f" % (pct(own, .1), pct(own, .5), pct(own, .9)))' "$WORK/tids"
}
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
HOGS=$!
echo "threads: $(policies)"; echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
scx first
dmesg | grep -i -E "clocksource|tsc" | tail -8
echo "threads after fifo: $(policies)"
kill $HOGS; mt_stop_all
