#!/usr/bin/env bash
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
# "[bench] finished S": the host's watchdog and skip logic read them). Each
# record says where the CPU went over its window, in CPUs: the servers', the
# scheduler process's (both from every thread's /proc schedstat: exact run
# time, where utime+stime is sampled at the timer tick), its BPF programs'
# (the kernel's BPF run-time statistics, on for every cell) and the idle
# CPUs'. Every other round runs the schedulers in the reverse order (the
# idle machine first always), so that no scheduler always follows the same
# one.
#
#   scripts/guest/bench-real.sh --server minetest|openttd --vcpus N --seconds S --repeat N --schedulers LIST
#
# scx_tick selects every thread of the servers by process name, one tick
# per server process (tick=process), as an operator would; fifo puts every
# server thread at SCHED_FIFO 50; the peers run with their defaults. Other
# schedulers of the list (deadline, the standard bench's scx_tick variants)
# have no real-server cell and are skipped. A name of scripts/bench.sh
# --variant (SCX_TICK_BENCH_VARIANTS: NAME=ARGS;...) is scx_tick with
# ARGS added, or with --bin PATH first another build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
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
    server_pids() { echo "${MT_PIDS[@]}"; }
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
    server_pids() { echo "${OTTD_PIDS[@]}"; }
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
    scx_tick_*)
      local variants=() v args=() bin="$BIN/scx_tick"
      IFS=';' read -ra variants <<<"${SCX_TICK_BENCH_VARIANTS:-}"
      for v in "${variants[@]}" ""; do [[ $v == "$s="* ]] && break; done
      [[ -n "$v" ]] || { SKIP_WHY="no --variant $s"; return 1; }
      read -ra args <<<"${v#"$s="}"
      if [[ "${args[0]:-}" == --bin ]]; then bin=${args[1]}; args=("${args[@]:2}"); fi
      cmd=("$bin" --tick-threads "$SPEC" --stats-json "$WORK/scx.jsonl" "${args[@]}") ;;
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
# Where the CPU goes: the wall clock, the idle CPUs' time (/proc/stat, in
# clock ticks), the run time (ns) of the servers' threads and of the
# scheduler process's, and the BPF programs' (bpftool, read at the tally).
sysctl -qw kernel.bpf_stats_enabled=1 2>/dev/null || true
run_ns() { # PID...: the run time of every thread of the processes
  local p t sum=0 ns
  for p in "$@"; do for t in /proc/"$p"/task/*/schedstat; do
    read -r ns _ 2>/dev/null <"$t" && ((sum += ns))
  done; done
  echo $sum
}
cpu_snap() { # FILE
  local idle
  read -r _ _ _ _ idle _ </proc/stat
  # shellcheck disable=SC2046 # the PIDs are words
  echo "$(date +%s%N) $idle $(run_ns $(server_pids)) $([[ -n $SCHED_PID ]] && run_ns "$SCHED_PID" || echo 0)" >"$1.txt"
  if [[ -n $SCHED_PID ]]; then bpftool -j prog show >"$1.bpf.json" 2>/dev/null || true; fi
  return 0
}
CELLS=()
cell() { # SCHEDULER ROUND: measure SECS seconds (tally_cells makes the record)
  local s=$1 round=$2
  [[ $s == scx_tick* ]] || rm -f "$WORK/scx.jsonl"
  sleep 2
  cpu_snap "$WORK/snap-$s-$round-0"
  measure_window mark
  cpu_snap "$WORK/snap-$s-$round-1"
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
    SNAP="$WORK/snap-$s-$round" python3 - "$SERVER" "$SCENARIO" "$s" "$round" "$VCPUS" "$((WIN_NS / 1000000))" "$WIN_HOGS" $rates $r <<'PY'
import json, os, sys
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
# where the CPU went over the window (cpu_snap at both edges), in CPUs
snap = os.environ["SNAP"]
def read_snap(edge):
    wall, idle, servers, sched = (int(x) for x in open(f"{snap}-{edge}.txt").read().split())
    try:
        progs = json.load(open(f"{snap}-{edge}.bpf.json"))
        bpf = sum(p.get("run_time_ns", 0) for p in progs)
    except (OSError, ValueError):
        bpf = 0
    return wall, idle, servers, sched, bpf
try:
    a, b = read_snap(0), read_snap(1)
    wall = (b[0] - a[0]) / 1e9
    hz = os.sysconf("SC_CLK_TCK")
    rec["idle_cpus"] = (b[1] - a[1]) / hz / wall
    rec["server_cpus"] = (b[2] - a[2]) / 1e9 / wall
    rec["sched_cpus"] = (b[3] - a[3]) / 1e9 / wall
    rec["bpf_cpus"] = (b[4] - a[4]) / 1e9 / wall
except (OSError, ValueError) as e:
    print(f"[bench] {s} round {rnd}: no CPU snapshot ({e})", file=sys.stderr)
if tps != "-":
    rec["scx_ticks_per_s"], rec["scx_misses_per_s"] = float(tps), float(mps)
print(json.dumps(rec))
print(f"[bench] {scen} {s:12} round {rnd}: {rec['late']} of {rec['steps']} {'steps' if server == 'minetest' else 'ticks'} "
      f"late ({rec['late_pct']:.2f} %)" + (f", {rec['lost_pct']:.2f} % lost" if "lost_pct" in rec else "")
      + f", hogs {rec['hog_cpus']:.2f} CPUs"
      + (f", servers {rec['server_cpus']:.2f}, scheduler {rec['sched_cpus']:.2f} + BPF {rec['bpf_cpus']:.2f},"
         f" idle {rec['idle_cpus']:.2f}" if "idle_cpus" in rec else ""), file=sys.stderr)
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
  order=("${SCHED_LIST[@]}")
  if ((round % 2)); then order=(); for ((k = ${#SCHED_LIST[@]} - 1; k >= 0; k--)); do order+=("${SCHED_LIST[$k]}"); done; fi
  for s in "${order[@]}"; do
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
