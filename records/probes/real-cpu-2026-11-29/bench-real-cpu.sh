#!/usr/bin/env bash
# PROBE (issue 26, 2026-11-29): scripts/guest/bench-real.sh at 2227b11 with a
# snapshot of /proc/stat, the servers' CPU time and the BPF programs' run
# time at each edge of every cell's window (tarred to stdout at the end).
# The benchmark's real-server families, run by scripts/bench.sh inside a
# sched_ext guest, under each scheduler of --schedulers in turn, in
# --repeat rounds, beside 2 x vCPUs CPU hogs; each round first measures the
# idle machine (no hogs, EEVDF). --server picks the family:
#   minetest  (real) four of Debian's minetest-server (minetest_game, the
#             project's load mod: 12 ms of CPU work in every 50 ms step,
#             each step logged by the server itself, tests/servers/minetest.sh)
#   openttd   (real-sim) two of Debian's openttd dedicated servers on the
#             2048 x 2048 map, the game's tick counter logged every 30 ms
#             tick by the project's game script (tests/servers/openttd.sh)
# One JSON record per cell on stdout; progress on stderr ("[bench] start S",
# "[bench] finished S": the host's watchdog and skip logic read them).
#
#   scripts/guest/bench-real.sh --server minetest|openttd --vcpus N --seconds S --repeat N --schedulers LIST
#
# scx_tick selects every thread of the servers by process name, one tick
# per server process (tick=process), as an operator would; fifo puts every
# server thread at SCHED_FIFO 50; the peers run with their defaults. Other
# schedulers of the list (deadline, the scx_tick variants) have no
# real-server cell and are skipped.
set -euo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"

SERVER=minetest VCPUS="" SECS="" REPEAT="" SCHEDS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) SERVER=$2; shift 2 ;;
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
# Each family's servers: how to start them, wait for them, mark a phase,
# read their own late steps or ticks, and make them SCHED_FIFO.
case "$SERVER" in
  minetest)
    source "$ROOT/tests/servers/minetest.sh"
    SCENARIO=real GROUP=mt SPEC="mt,process=^minetestserver\$,tick=process"
    start_servers() { local i; for i in 1 2 3 4; do mt_start s$i 12 50; done
      for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || die "server s$i logged no steps in 240 s"; done; }
    mark() { mt_mark; }
    late() { mt_late "$1" "$2" 50; } # steps late seconds step_work_ms
    servers_fifo() { mt_fifo "$1"; }
    stop_servers() { mt_stop_all; } ;;
  openttd)
    source "$ROOT/tests/servers/openttd.sh"
    ottd_available || die "openttd or its map is missing (scripts/setup.sh installs and makes them)"
    SCENARIO=real-sim GROUP=ottd SPEC="ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=$OTTD_DEADLINE_MS,tick=process"
    start_servers() { local i; for i in 1 2; do ottd_start s$i; done
      for i in 1 2; do ottd_wait_ticks s$i 60 240 || die "server s$i logged no ticks in 240 s"; done; }
    mark() { ottd_mark; }
    late() { ottd_late "$1" "$2"; } # due run late seconds behind overdue
    servers_fifo() { ottd_fifo "$1"; }
    stop_servers() { ottd_stop_all; } ;;
  *) die "guest/bench-real.sh: --server $SERVER: allowed: minetest, openttd" ;;
esac
trap 'stop_sched; pkill -f stress-ng 2>/dev/null || true; stop_servers' EXIT

SCHED_PID=""
start_sched() { # SCHEDULER: 0 when it runs (or is the kernel's), 1 skipped (SKIP_WHY)
  local s=$1 cmd=()
  case "$s" in
    eevdf|fifo) return 0 ;;
    scx_tick) cmd=("$BIN/scx_tick" --tick-threads "$SPEC" --stats-json "$WORK/scx.jsonl") ;;
    *)
      [[ " ${PEERS[*]} " == *" $s "* ]] || { SKIP_WHY="no real-server cell"; return 1; }
      [[ -x "$PEER_DIR/bin/$s" ]] || { SKIP_WHY="not installed"; return 1; }
      cmd=("$PEER_DIR/bin/$s") ;;
  esac
  rm -f "$WORK/scx.jsonl"
  # loaded at nice -20, every scheduler alike, run at 0 (threads_nice_0)
  nice -n -20 "${cmd[@]}" >"$WORK/sched-$s.log" 2>&1 &
  SCHED_PID=$!
  if ! wait_sched_state enabled 120 "$SCHED_PID"; then
    SKIP_WHY="did not load: $(tail -2 "$WORK/sched-$s.log" | tr '\n' ' ' | cut -c1-200)"
    stop_sched
    return 1
  fi
  threads_nice_0 "$SCHED_PID"
}
CELLS=()
# where the CPU time goes over a cell: every CPU's /proc/stat line, the
# servers' and the scheduler's own utime+stime, the BPF programs' run time
sysctl -qw kernel.bpf_stats_enabled=1
mkdir -p /tmp/snaps
snap() {
  { grep "^cpu" /proc/stat; for p in "${MT_PIDS[@]}"; do echo "server $(cut -d" " -f14,15 /proc/$p/stat)"; done
    [[ -n $SCHED_PID ]] && echo "sched $(cut -d" " -f14,15 /proc/$SCHED_PID/stat)"; } >/tmp/snaps/$1.txt
  [[ -n $SCHED_PID ]] && bpftool -j prog show >/tmp/snaps/$1.bpf.json 2>/dev/null
  return 0
}
cell() { # SCHEDULER ROUND: measure SECS seconds (tally_cells makes the record)
  local s=$1 round=$2
  [[ $s == scx_tick ]] || rm -f "$WORK/scx.jsonl"
  sleep 2
  snap "$s-$round-0"
  measure_window mark
  snap "$s-$round-1"
  # scx_tick's own ticks/s and misses/s come from its --stats-json so far
  [[ -s $WORK/scx.jsonl ]] && cp "$WORK/scx.jsonl" "$WORK/scx-$s-$round.jsonl"
  keep_window "cell_${s}_$round"
  CELLS+=("$s $round")
}
# One record per cell measured so far, printed once the hogs stopped: beside
# them every process started is slow (python3 took 7-10 s to start, three
# a cell).
tally_cells() {
  local c s round r rates
  for c in "${CELLS[@]}"; do
    read -r s round <<<"$c"
    load_window "cell_${s}_$round"
    r=$(late "$WIN_FROM" "$WIN_TO")
    # scx_tick's ticks/s and misses/s over the cell ("-" for the others)
    rates=$([[ -s $WORK/scx-$s-$round.jsonl ]] && group_rates "$WORK/scx-$s-$round.jsonl" "$GROUP" 2>/dev/null || echo "- -")
    python3 - "$SERVER" "$SCENARIO" "$s" "$round" "$VCPUS" "$((WIN_NS / 1000000))" "$WIN_HOGS" $rates $r <<'PY'
import json, sys
server, scen, s, rnd, vcpus, window_ms, hog, tps, mps = sys.argv[1:10]
rec = {"scenario": scen, "scheduler": s, "round": int(rnd), "vcpus": int(vcpus),
       "hog_cpus": int(hog) / 100 / (int(window_ms) / 1000)}
if server == "minetest":
    steps, late, span, work = sys.argv[10:]
    rec.update(steps=int(steps), late=int(late), seconds=float(span), step_work_ms=float(work))
else:  # the ticks run count as steps; those due and not run were lost
    due, run, late, span, behind, overdue = sys.argv[10:]
    rec.update(steps=int(run), late=int(late), seconds=float(span), due=int(due), behind=int(behind),
               overdue=int(overdue),
               lost_pct=100 * max(0, int(due) - int(run)) / max(1, int(due)))
rec["late_pct"] = 100 * rec["late"] / max(1, rec["steps"])
if tps != "-":
    rec["scx_ticks_per_s"], rec["scx_misses_per_s"] = float(tps), float(mps)
print(json.dumps(rec))
print(f"[bench] {scen} {s:12} round {rnd}: {rec['late']} of {rec['steps']} {'steps' if server == 'minetest' else 'ticks'} "
      f"late ({rec['late_pct']:.2f} %)" + (f", {rec['lost_pct']:.2f} % lost" if "lost_pct" in rec else "")
      + f", hogs {rec['hog_cpus']:.2f} CPUs", file=sys.stderr)
PY
  done
  CELLS=()
}

echo "[bench] guest: $VCPUS vCPUs, kernel $(uname -r), real servers ($SERVER), $REPEAT round(s), $SECS s per cell" >&2
start_servers
skipped=" "
for ((round = 0; round < REPEAT; round++)); do
  pkill -f stress-ng 2>/dev/null || true
  sleep 1
  cell idle "$round"
  tally_cells
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
    [[ $s == fifo ]] && servers_fifo 50
    cell "$s" "$round"
    [[ $s == fifo ]] && servers_fifo 0
    stop_sched
    ((round == REPEAT - 1)) && echo "[bench] finished $s" >&2
  done
  stop_hogs
  tally_cells
done
echo "=== tar"; tar cz -C /tmp snaps | base64 -w0; echo
