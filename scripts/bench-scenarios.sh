# The benchmark's scenarios, shared by its host half (scripts/bench.sh,
# which describes them in the report) and its guest half
# (scripts/guest/bench.sh and bench-real.sh, which run them, and share
# stop_sched). Sourced.
ALL_SCENARIOS=(standard heavy-idle heavy-hogs capacity isolation real real-sim)
# real, real-sim: four real game servers (Debian's minetest-server), two
# real simulation servers (Debian's openttd), beside CPU hogs, the servers'
# own late steps or ticks (scripts/guest/bench-real.sh)
# The schedulers, from scripts/bench-schedulers: ALL_SCHEDS those
# --schedulers takes (in the default order), REAL_SCHEDS those the
# real-server families run, PEERS the sched_ext ones from the registry.
ALL_SCHEDS=() REAL_SCHEDS=() PEERS=()
read_bench_schedulers() {
  local name kind real _
  while read -r name kind real _; do
    [[ -z $name || $name == \#* || $kind == retired ]] && continue
    ALL_SCHEDS+=("$name")
    if [[ $real == yes ]]; then REAL_SCHEDS+=("$name"); fi
    if [[ $kind == peer ]]; then PEERS+=("$name"); fi
  done <"$(dirname "${BASH_SOURCE[0]}")/bench-schedulers"
}
read_bench_schedulers
PEER_DIR="$CACHE_DIR/peers"
# The tick scenario: 20 TPS, 8 ms ± 2 ms of work, 1% of ticks spike to 40 ms.
TICK_ARGS=(--period-ms 50 --work-ms 8 --jitter-ms 2 --spike-ms 40 --spike-pct 1 --seed 1)
# SCHED_DEADLINE runtime: 1.6 x (work + jitter). Under TCG the kernel charges
# 1-3 ms more per tick than the work itself (with tickload's default 1.1 x,
# 16% of ticks were throttled even in an idle guest); a user would size it
# from measurements like this too.
DL_RUNTIME_MS=16
HOGS_PER_CPU=2
# The heavy scenario: 3T runners (T = half the cores) of 20 ms per 50 ms ask
# for 1.2 x T CPUs: more than scx_tick-halfcores' tick CPUs, so there runners
# must spill over to the other CPUs (the default's 2T-1 tick CPUs hold
# them); no jitter or spikes, so misses come from placement alone.
HEAVY_PER_T=3
HEAVY_ARGS=(--period-ms 50 --work-ms 20 --seed 1)
# 1.5 x the work: 1.6 x (32 ms) would ask SCHED_DEADLINE for 3T x 0.64 =
# 0.96 x vCPUs, above the kernel's admission limit of 0.95 per CPU.
HEAVY_DL_RUNTIME_MS=30
# The capacity sweep: runners of 12 ms per 50 ms (0.24 CPU each, no jitter)
# beside 2 x vCPUs CPU hogs, counted upward from 1.5 x vCPUs in steps of
# vCPUs / 2 to 4 x vCPUs (1.4-3.8 CPUs of tick work at 4 vCPUs). A count
# is held at <= 0.5 % missed (the report's medians decide); a round's sweep
# goes on past a failed count until one misses more than 5 %, so one noisy
# run of the emulated guest does not end it and the plot shows the knee.
CAP_ARGS=(--period-ms 50 --work-ms 12 --seed 1)
CAP_HELD_PCT=0.5
CAP_STOP_PCT=5
# SCHED_DEADLINE runtime for 12 ms of work (1.5 x, as the heavy scenarios):
# the kernel admits at most 0.95 x vCPUs / 0.36 runners of it.
CAP_DL_RUNTIME_MS=18
capacity_counts() { # vcpus
  local v=$1 step=$(($1 / 2 > 0 ? $1 / 2 : 1)) n
  for ((n = (3 * v + 1) / 2; n <= 4 * v; n += step)); do echo "$n"; done
}
# Isolation: a well-behaved server (vCPUs runners, the capacity runners'
# work) beside vCPUs CPU hogs, alone, then beside an overloaded server in
# its own tick group (cgroup `overloaded`): 3/4 x vCPUs runners that never
# sleep, 70 ms of work per 50 ms tick (a lag machine).
OVERLOADED_ARGS=(--period-ms 50 --work-ms 70 --game-server --seed 7)
# bench.sh --overloaded-blocks N: its runners block N times a tick (1 ms each)
overloaded_blocks() { (($1 == 0)) || OVERLOADED_ARGS+=(--blocks "$1"); }
overloaded_runners() { echo $(((3 * $1 + 3) / 4)); }


# The guest halves' scheduler started last (its pid in SCHED_PID): stopped
# with SIGINT, killed after 20 s, then sched_ext must be disabled again.
stop_sched() {
  [[ -n "${SCHED_PID:-}" ]] || return 0
  kill -INT "$SCHED_PID" 2>/dev/null || true
  local i
  for ((i = 0; i < 200; i++)); do kill -0 "$SCHED_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$SCHED_PID" 2>/dev/null || true
  wait "$SCHED_PID" 2>/dev/null || true
  SCHED_PID=""
  wait_sched_state disabled 30 && return 0
  echo "[bench] warning: sched_ext still $(sched_state) after stopping" >&2
}
