#!/usr/bin/env bash
# The soak's load phase (tests/soak/mixed_load.sh) alone, 3 times; on an
# ejection prints scx_tick's whole stderr (the kernel's debug dump).
source "$ROOT/tests/lib.sh"
LOAD_S=30
CHURN="$ROOT/target/release/threadchurn"
WORLD=$(make_cgroup world)
PHYSICS=$(make_cgroup physics)
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
BOMB=$(make_cgroup bomb)
echo 64 >"$BOMB/pids.max"
ulimit -n 16384
note "rt: $(cat /proc/sys/kernel/sched_rt_runtime_us) of $(cat /proc/sys/kernel/sched_rt_period_us) ${VARIANT:-}"
for round in 1 2 3; do
  start_scx --tick-cpus 1,2 --tick-cgroup world,period=50 --tick-cgroup physics,period=16,cpus=2 ${SCX_EXTRA:-}
  pids=()
  "$TICKLOAD" -n 3 --period-ms 50 --work-ms 8 --duration-s "$LOAD_S" --cgroup "$WORLD" --json >"$WORK/world.json" &
  pids+=($!)
  "$TICKLOAD" -n 1 --period-ms 16 --work-ms 2 --duration-s "$LOAD_S" --cgroup "$PHYSICS" --json >"$WORK/physics.json" &
  pids+=($!)
  stress-ng --cpu 4 --timeout "${LOAD_S}s" >/dev/null 2>&1 &
  [[ ${NOFIFO:-0} == 1 ]] || { chrt -f 50 taskset -c 1 stress-ng --cpu 1 --timeout "$((LOAD_S / 2))s" >/dev/null 2>&1 & }
  taskset -c 1 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s "$LOAD_S" --json >"$WORK/probe-pinned" &
  pids+=($!)
  mkdir -p "$WORLD/churn"
  [[ ${NOCHURN:-0} == 1 ]] || "$CHURN" --duration-s "$((LOAD_S * 2 / 3))" --cgroup "$WORLD/churn" >"$WORK/churn.json" &
  ( echo $BASHPID >"$BOMB/cgroup.procs"; exec timeout "$((LOAD_S * 2 / 3))" bash -c 'bomb() { bomb | bomb & }; bomb; wait' 2>/dev/null ) &
  end=$((SECONDS + LOAD_S))
  while ((SECONDS < end)); do
    hackbench --threads --groups 20 --loops 5 >/dev/null 2>&1
    if [[ "$(sched_state)" != enabled ]]; then
      note "round $round: EJECTED at +$((SECONDS - end + LOAD_S)) s"
      sleep 1
      cat "$WORK/scx.err" | grep -v "admission" | head -400
      exit 1
    fi
  done
  wait "${pids[@]}"
  echo 1 >"$BOMB/cgroup.kill"
  stop_scx INT
  note "round $round: ok, exit $SCX_RC"
  python3 - "$WORK/probe-pinned" "$WORK/world.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    p = json.load(open(f))["total"]
    print(f"# {f.rsplit('/', 1)[1]}: {p['ticks']} ticks {p['misses']} missed, longest wait start {p['lateness_max_ms']:.0f} ms, mid-work {p['stall_max_ms']:.0f} ms")
PY
  rmdir "$WORLD/churn" 2>/dev/null || true
done
