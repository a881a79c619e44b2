# A second real tick-driven server for the scenarios and the benchmark
# (sourced): Debian's openttd (13.x) as a dedicated server (-D) on a
# 2048 x 2048 map that scripts/setup.sh makes once (ottd_make_save), with
# the project's game script (tests/servers/openttd/ticklog), which logs the
# game's tick counter every tick. The map is the load: the landscape's tile
# loop costs about 10 ms of the 30 ms tick in the emulated guest.
#
# OpenTTD's game loop is its main thread: it sleeps until the next 30 ms
# tick, runs it, and when behind runs ticks back to back until it has caught
# up (up to 5 ticks behind; farther behind it drops them and the game runs
# slow). Its own notion of keeping up is the game speed (its frame rate
# window's "speed factor"): the ticks it ran over the ticks due. A real-time
# reader stamps each logged tick; a late tick came more than 1.5 ticks after
# the one before it (as for minetest).
#
#   ottd_make_save                 the map with the game script (host, set-up)
#   ottd_start NAME                a server in $WORK/ottd-NAME (background)
#   ottd_wait_ticks NAME N [SECS]  until it has logged N ticks
#   ottd_mark                      each server's logged tick count (a phase mark)
#   ottd_late FROM TO              ticks due, ticks run, late ticks, seconds,
#                                  ticks behind schedule, overdue ticks
#                                  between two marks, over all servers
#   ottd_fifo PRIORITY             every server thread SCHED_FIFO (0: back)
#   ottd_stop_all
OTTD_BIN=/usr/games/openttd
OTTD_TICK_MS=30
# scx_tick's deadline for a tick: two ticks. OpenTTD runs a late tick and
# the next back to back, so a tick that ends within the next tick's time
# costs the game nothing; with deadline = period scx_tick counted 6.7-7.2
# misses per late tick (a tick logged more than 1.5 ticks after the one
# before), with 60 ms 1.4-2.5, with 90 ms 0.0-0.1 (two 10 s windows each,
# 2 servers beside 8 hogs, 4 vCPUs, one guest, 2026-11-26).
OTTD_DEADLINE_MS=60
OTTD_SAVE="$CACHE_DIR/openttd/tick2048.sav"
OTTD_SCRIPT="$ROOT/tests/servers/openttd/ticklog"
OTTD_NAMES=() OTTD_PIDS=()
OTTD_PORT=3979

ottd_available() { [[ -x $OTTD_BIN && -s $OTTD_SAVE ]]; }

# A dedicated server's directory: its configuration (no network
# announcement, no autosave, the game script) and the script where
# OpenTTD looks for game scripts (game/ under its working directory). The
# monthly autosave (about a minute of game time) stalled a loaded guest's
# servers for more than 10 s while it wrote the map: a whole phase with no
# ticks.
ottd_dir() {
  mkdir -p "$1/game"
  ln -sfn "$OTTD_SCRIPT" "$1/game/ticklog"
  cat >"$1/openttd.cfg" <<CONF
[gui]
autosave = off
[game_creation]
map_x = 11
map_y = 11
[network]
server_advertise = false
[game_scripts]
TickLog =
CONF
}

# The map, made on the host at set-up (a minute in the emulated guest, two
# seconds here): a new game with the game script, saved once it runs.
ottd_make_save() {
  local dir tmp i
  [[ -s $OTTD_SAVE ]] && return 0
  dir=$(mktemp -d) tmp="$(dirname "$OTTD_SAVE")"
  mkdir -p "$tmp"
  ottd_dir "$dir"
  (
    for ((i = 0; i < 600; i++)); do
      grep -q "tick 10$" "$dir/out" 2>/dev/null && break
      sleep 0.2
    done
    echo "save $dir/made"
    sleep 3
    echo quit
  ) | (cd "$dir" && timeout 180 "$OTTD_BIN" -D 127.0.0.1:0 -x -c "$dir/openttd.cfg" -d script=4 -g -G 1 >"$dir/out" 2>&1) || true
  if [[ -s $dir/made.sav ]]; then
    mv "$dir/made.sav" "$OTTD_SAVE"
  else
    tail -5 "$dir/out" >&2
  fi
  rm -rf "$dir"
  [[ -s $OTTD_SAVE ]]
}

# The server's console is its stdin (kept open by a sleep; quit on stop),
# its log its stderr, stamped per line by a real-time reader so the stamps
# are the server's, not the reader's waits.
ottd_start() {
  local name=$1 dir=$WORK/ottd-$1
  ottd_dir "$dir"
  OTTD_PORT=$((OTTD_PORT + 1))
  mkfifo "$dir/console"
  (cd "$dir" && exec "$OTTD_BIN" -D "127.0.0.1:$OTTD_PORT" -x -c "$dir/openttd.cfg" -d script=4 \
    -g "$OTTD_SAVE" <"$dir/console" 2>&1 | chrt -f 60 python3 -u -c '
import sys, time
for line in sys.stdin:
    if "] tick " in line:
        print(time.monotonic_ns() // 1000, line.rsplit(" ", 1)[1].strip(), flush=True)
' >"$dir/ticks.log") &
  OTTD_PIDS+=($!) OTTD_NAMES+=("$name")
  sleep 3600 >"$dir/console" &
  echo $! >"$dir/console.pid"
}

ottd_ticks() { local n; n=$(wc -l <"$WORK/ottd-$1/ticks.log" 2>/dev/null) || true; echo "${n:-0}"; }

ottd_wait_ticks() { wait_count ottd_ticks "$1" "$2" "${3:-120}"; }
ottd_mark() { mark_counts ottd_ticks "${OTTD_NAMES[@]}"; }

# Between two marks, over all servers: "due run late seconds behind
# overdue". Due:
# the ticks the marks' wall time holds (30 ms each); run: the ticks the
# servers logged; late: ticks stamped more than 1.5 ticks after the one
# before; behind: ticks stamped more than a whole tick after the time the
# server's own schedule gave them (it runs tick k at start + k x 30 ms, and
# starts that schedule again from now once more than 5 ticks behind): the
# phase of the schedule is the earliest stamp's (stamp - k x 30 ms), per
# stretch between two restarts. Overdue: ticks stamped more than scx_tick's
# deadline for a tick (OTTD_DEADLINE_MS) after the one before, what its
# misses mean in the server's log. The stamp is the game script's line,
# which runs after the tile loop, so its place in a tick moves with the
# tick's work (10-35 ms of wall time beside hogs): traced beside the logs
# (4 vCPUs, two servers, 8 hogs, 2026-11-27), ticks begun 30 ms apart were
# stamped 46-51 ms apart after a quick tick: of 30 gaps of 1.5-2 ticks, 29
# had no miss of scx_tick near them, of 18 over two ticks 14 had one, and
# each of its 15 misses came at a gap over 1.5 ticks.
ottd_late() {
  local from=($1) to=($2) i args=()
  for i in "${!OTTD_NAMES[@]}"; do
    args+=("$WORK/ottd-${OTTD_NAMES[$i]}/ticks.log" "${from[$i]}" "${to[$i]}")
  done
  python3 - "$OTTD_TICK_MS" "$OTTD_DEADLINE_MS" "${args[@]}" <<'PY'
import sys
tick_us, deadline_us = float(sys.argv[1]) * 1000, float(sys.argv[2]) * 1000
due = run = late = behind = overdue = 0
secs = 0.0
a = sys.argv[3:]
for i in range(0, len(a), 3):
    path, lo, hi = a[i], int(a[i + 1]), int(a[i + 2])
    ts = [int(l.split()[0]) for l in open(path)][lo:hi]
    if len(ts) < 2:
        continue
    run += len(ts) - 1
    due += round((ts[-1] - ts[0]) / tick_us)
    gaps = [t - p for p, t in zip(ts, ts[1:])]
    late += sum(g > 1.5 * tick_us for g in gaps)
    overdue += sum(g > deadline_us for g in gaps)
    secs += (ts[-1] - ts[0]) / 1e6
    # the schedule's restarts (a running phase left 5 ticks behind), then
    # each stretch's phase and the ticks more than a tick behind it
    phases = [t - k * tick_us for k, t in enumerate(ts)]
    cuts, lo_phase = [0], phases[0]
    for k, ph in enumerate(phases):
        if ph - lo_phase > 5 * tick_us:
            cuts.append(k)
            lo_phase = ph
        lo_phase = min(lo_phase, ph)
    cuts.append(len(ts))
    for c0, c1 in zip(cuts, cuts[1:]):
        base = min(phases[c0:c1])
        behind += sum(ph - base > tick_us for ph in phases[c0:c1])
print(due, run, late, f"{secs / max(1, len(a) // 3):.2f}", behind, overdue)
PY
}

ottd_server_pids() { local n; for n in "${OTTD_NAMES[@]}"; do pgrep -f "ottd-$n/openttd.cfg" || true; done; }

ottd_fifo() { threads_fifo "$1" $(ottd_server_pids); }

ottd_stop_all() {
  local n p
  for p in $(ottd_server_pids); do kill "$p" 2>/dev/null || true; done
  for n in "${OTTD_NAMES[@]}"; do kill "$(cat "$WORK/ottd-$n/console.pid" 2>/dev/null)" 2>/dev/null || true; done
  for p in "${OTTD_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  OTTD_PIDS=() OTTD_NAMES=()
}
