#!/usr/bin/env bash
# The benchmark's real-server family, run by scripts/bench.sh inside a
# sched_ext guest: four of Debian's minetest-server (minetest_game, the
# project's load mod: WORK_MS of CPU work in every 50 ms step, each step
# logged by the server itself, tests/servers/minetest.sh) beside 2 x vCPUs
# CPU hogs, under each scheduler of --schedulers in turn, in --repeat
# rounds. Each round first measures the idle machine (no hogs, EEVDF). One
# JSON record per cell on stdout; progress on stderr ("[bench] start S",
# "[bench] finished S": the host's watchdog and skip logic read them).
#
#   scripts/guest/bench-real.sh --vcpus N --seconds S --repeat N --schedulers LIST
#
# scx_tick selects every thread of the servers by process name, one tick
# per server process (tick=process), as an operator would; fifo puts every
# server thread at SCHED_FIFO 50; the peers run with their defaults. Other
# schedulers of the list (deadline, the scx_tick variants) have no
# real-server cell and are skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"

VCPUS="" SECS="" REPEAT="" SCHEDS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --vcpus) VCPUS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --schedulers) SCHEDS=$2; shift 2 ;;
    *) die "guest/bench-real.sh: unknown option $1 (it is run by scripts/bench.sh)" ;;
  esac
done
[[ -n "$VCPUS" && -n "$SECS" && -n "$REPEAT" && -n "$SCHEDS" ]] \
  || die "guest/bench-real.sh: every option is needed (it is run by scripts/bench.sh)"
IFS=, read -ra SCHED_LIST <<<"$SCHEDS"
BIN="$ROOT/target/release"
WORK=$(mktemp -d /tmp/bench-real.XXXXXX)
cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
trap 'stop_sched; pkill -f stress-ng 2>/dev/null || true; mt_stop_all' EXIT

SCHED_PID=""
start_sched() { # SCHEDULER: 0 when it runs (or is the kernel's), 1 skipped (SKIP_WHY)
  local s=$1 cmd=()
  case "$s" in
    eevdf|fifo) return 0 ;;
    scx_tick) cmd=("$BIN/scx_tick" --tick-threads "mt,process=^minetestserver\$,tick=process"
      --stats-json "$WORK/scx.jsonl") ;;
    scx_bpfland|scx_flash|scx_lavd)
      [[ -x "$PEER_DIR/bin/$s" ]] || { SKIP_WHY="not installed"; return 1; }
      cmd=("$PEER_DIR/bin/$s") ;;
    *) SKIP_WHY="no real-server cell"; return 1 ;;
  esac
  rm -f "$WORK/scx.jsonl"
  "${cmd[@]}" >"$WORK/sched-$s.log" 2>&1 &
  SCHED_PID=$!
  if ! wait_sched_state enabled 120 "$SCHED_PID"; then
    SKIP_WHY="did not load: $(tail -2 "$WORK/sched-$s.log" | tr '\n' ' ' | cut -c1-200)"
    stop_sched
    return 1
  fi
}
cell() { # SCHEDULER ROUND: measure SECS seconds, print the record
  local s=$1 round=$2 h0 h1 from to r
  [[ $s == scx_tick ]] || rm -f "$WORK/scx.jsonl"
  sleep 2
  h0=$(hog_ticks); from=$(mt_mark); sleep "$SECS"; to=$(mt_mark); h1=$(hog_ticks)
  r=$(mt_late "$from" "$to" 50)
  python3 - "$s" "$round" "$VCPUS" "$SECS" "$((h1 - h0))" $r "$WORK/scx.jsonl" <<'PY'
import json, os, sys
s, rnd, vcpus, secs, hog, steps, late, span, work, stats = sys.argv[1:]
rec = {"scenario": "real", "scheduler": s, "round": int(rnd), "vcpus": int(vcpus),
       "steps": int(steps), "late": int(late), "late_pct": 100 * int(late) / max(1, int(steps)),
       "step_work_ms": float(work), "hog_cpus": int(hog) / 100 / float(secs), "seconds": float(span)}
if os.path.exists(stats):
    lines = [json.loads(l) for l in open(stats) if l.strip()]
    if len(lines) >= 3:
        a, b = lines[1], lines[-1]
        dt = b["uptime_s"] - a["uptime_s"]
        rec["scx_ticks_per_s"] = (b["groups"]["mt"]["ticks"] - a["groups"]["mt"]["ticks"]) / dt
        rec["scx_misses_per_s"] = (b["groups"]["mt"]["misses"] - a["groups"]["mt"]["misses"]) / dt
print(json.dumps(rec))
print(f"[bench] real {s:12} round {rnd}: {late} of {steps} steps late ({rec['late_pct']:.2f} %), "
      f"step work {work} ms, hogs {rec['hog_cpus']:.2f} CPUs", file=sys.stderr)
PY
}

echo "[bench] guest: $VCPUS vCPUs, kernel $(uname -r), real servers, $REPEAT round(s), $SECS s per cell" >&2
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || die "server s$i logged no steps in 240 s"; done
skipped=" "
for ((round = 0; round < REPEAT; round++)); do
  pkill -f stress-ng 2>/dev/null || true
  sleep 1
  cell idle "$round"
  stress-ng --cpu $((HOGS_PER_CPU * VCPUS)) --timeout 0 >/dev/null 2>&1 &
  for s in "${SCHED_LIST[@]}"; do
    [[ "$skipped" == *" $s "* ]] && continue
    echo "[bench] start $s" >&2
    if ! start_sched "$s"; then
      echo "[bench] $s skipped: $SKIP_WHY" >&2
      skipped+="$s "
      echo "[bench] finished $s" >&2
      continue
    fi
    [[ $s == fifo ]] && mt_fifo 50
    cell "$s" "$round"
    [[ $s == fifo ]] && mt_fifo 0
    stop_sched
    ((round == REPEAT - 1)) && echo "[bench] finished $s" >&2
  done
done
