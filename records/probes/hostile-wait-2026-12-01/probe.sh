#!/usr/bin/env bash
# vm/hostile_load_stalls_nothing's load (SCHED_FIFO hog on CPU 1, pids-held
# fork bomb, 2000 hackbench threads, pinned and free stress-ng, two 1 ms /
# 20 ms probes), cells in turns under scx_tick and under EEVDF in one
# guest: is the free probe's longest wait (2.8 s on one CI host) scx_tick's
# or the load's on a slow emulated host? Env: ROUNDS (2), SECS (25),
# BIN (a scx_tick build; default the tree's).
source "$(dirname "$0")/../../../tests/lib.sh"
SECS=${SECS:-25} ROUNDS=${ROUNDS:-2}
[[ -n ${BIN:-} ]] && SCX=$BIN
CG=$(make_cgroup tick)
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
BOMB=$(make_cgroup bomb)
echo 64 >"$BOMB/pids.max"
ulimit -n 16384
cell() { # eevdf|scx_tick
  [[ $1 == scx_tick ]] && start_scx --tick-cpus 1,2 --tick-cgroup tick --watchdog-ms 30000
  local pids=()
  "$TICKLOAD" -n 2 --work-ms 5 --duration-s "$SECS" --cgroup "$CG" --json >"$WORK/load" &
  pids+=($!)
  chrt -f 50 taskset -c 1 stress-ng --cpu 1 --timeout "${SECS}s" --temp-path "$WORK" >/dev/null 2>&1 &
  pids+=($!)
  (
    echo $BASHPID >"$BOMB/cgroup.procs"
    exec bash -c 'bomb() { bomb | bomb & }; bomb; wait' 2>/dev/null
  ) &
  taskset -c 1 stress-ng --cpu 1 --timeout "${SECS}s" --temp-path "$WORK" >/dev/null 2>&1 &
  pids+=($!)
  stress-ng --cpu 2 --timeout "${SECS}s" --temp-path "$WORK" >/dev/null 2>&1 &
  pids+=($!)
  taskset -c 1 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s "$SECS" --json >"$WORK/probe-pinned" &
  pids+=($!)
  "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s "$SECS" --json >"$WORK/probe-other" &
  pids+=($!)
  local end=$((SECONDS + SECS)) rounds=0
  while ((SECONDS < end)); do
    hackbench --threads --groups 50 --loops 5 >/dev/null 2>&1 || true
    rounds=$((rounds + 1))
  done
  wait "${pids[@]}" || true
  echo 1 >"$BOMB/cgroup.kill"
  for ((i = 0; i < 100; i++)); do (($(cat "$BOMB/pids.current") == 0)) && break; sleep 0.1; done
  [[ $1 == scx_tick ]] && stop_scx INT
  python3 - "$1" "$rounds" "$WORK/probe-pinned" "$WORK/probe-other" "$WORK/load" <<'PY'
import json, sys
out = [f"{sys.argv[1]:9s} hackbench rounds {sys.argv[2]}"]
for name, f in (("pinned", sys.argv[3]), ("free", sys.argv[4]), ("runners", sys.argv[5])):
    p = json.load(open(f))["total"]
    out.append(f"{name} {p['ticks']} ticks, longest start {p['lateness_max_ms']:.0f} ms, mid-work {p['stall_max_ms']:.0f} ms")
print("; ".join(out), flush=True)
PY
}
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then cell scx_tick; cell eevdf; else cell eevdf; cell scx_tick; fi
done
