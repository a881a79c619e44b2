# A real tick-driven server for the scenarios and the benchmark (sourced):
# Debian's minetest-server running minetest_game with the project's load mod
# (tests/servers/minetest/scx_tick_load: fixed CPU work in every server step,
# each step's start time logged by the server itself).
#
# Minetest 5.6's server step spans two threads: the main thread is the
# clock (it sleeps one step, then adds the step's time to the game clock)
# and "ServerThread" polls the network with a 30 ms timeout and runs a step
# whenever the clock has advanced. A step therefore comes 0-30 ms after its
# clock tick on an idle machine, and its loop thread wakes about twice per
# step.
#
#   mt_start NAME WORK_MS [STEP_MS]   a server in $WORK/mt-NAME (background)
#   mt_wait_steps NAME N [SECS]       until it has logged N steps
#   mt_mark                           prints each server's step count (a phase mark)
#   mt_late MARK_FROM MARK_TO STEP_MS steps, late steps, seconds between two
#                                     marks, and the median step's wall time (ms)
#   mt_fifo PRIORITY                  every server thread SCHED_FIFO (0: back)
#   mt_stop_all
MT_BIN=/usr/games/minetestserver
MT_MOD="$ROOT/tests/servers/minetest/scx_tick_load"
MT_NAMES=() MT_PIDS=()
MT_PORT=30000

mt_available() { [[ -x $MT_BIN && -d /usr/share/games/minetest/games/minetest_game ]]; }

mt_start() {
  local name=$1 work_ms=$2 step_ms=${3:-50} dir=$WORK/mt-$1
  mkdir -p "$dir/world/worldmods"
  cp -r "$MT_MOD" "$dir/world/worldmods/"
  MT_PORT=$((MT_PORT + 1))
  cat >"$dir/minetest.conf" <<CONF
dedicated_server_step = $(awk -v s="$step_ms" 'BEGIN { printf "%.3f", s / 1000 }')
scx_tick_load.work_ms = $work_ms
server_announce = false
enable_ipv6 = false
CONF
  "$MT_BIN" --world "$dir/world" --gameid minetest_game --config "$dir/minetest.conf" \
    --port "$MT_PORT" --logfile "$dir/debug.txt" >"$dir/out" 2>&1 &
  MT_NAMES+=("$name") MT_PIDS+=($!)
}

mt_steps() { local n; n=$(grep -vc '^#' "$WORK/mt-$1/world/steps.log" 2>/dev/null) || true; echo "${n:-0}"; }

mt_wait_steps() {
  wait_count mt_steps "$1" "$2" "${3:-120}" || { tail -5 "$WORK/mt-$1/out" >&2; return 1; }
}
mt_mark() { mark_counts mt_steps "${MT_NAMES[@]}"; }

# Between two marks, every server's steps read from its own log: "steps
# late seconds", where a late step came more than half a step after the
# step before it had its step's time (the server's own clock ran on).
mt_late() {
  local from=($1) to=($2) step_ms=$3 i args=()
  for i in "${!MT_NAMES[@]}"; do
    args+=("$WORK/mt-${MT_NAMES[$i]}/world/steps.log" "${from[$i]}" "${to[$i]}")
  done
  python3 - "$step_ms" "${args[@]}" <<'PY'
import sys
step_us = float(sys.argv[1]) * 1000
steps = late = 0
secs = 0.0
durs = []
a = sys.argv[2:]
for i in range(0, len(a), 3):
    path, lo, hi = a[i], int(a[i + 1]), int(a[i + 2])
    rows = [l.split() for l in open(path) if not l.startswith('#')][lo:hi]
    ts = [int(r[0]) for r in rows]
    durs += [int(r[1]) for r in rows]
    for p, t in zip(ts, ts[1:]):
        steps += 1
        late += (t - p) > 1.5 * step_us
    if len(ts) > 1:
        secs += (ts[-1] - ts[0]) / 1e6
durs.sort()
work_ms = durs[len(durs) // 2] / 1000 if durs else 0
print(steps, late, f"{secs / max(1, len(a) // 3):.2f}", f"{work_ms:.1f}")
PY
}

mt_fifo() { threads_fifo "$1" "${MT_PIDS[@]}"; }

mt_stop_all() {
  local p
  for p in "${MT_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${MT_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  MT_PIDS=() MT_NAMES=()
}
