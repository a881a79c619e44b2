#!/usr/bin/env bash
# Tasks allowed only on a tick CPU still run, with mid-tick lending off,
# busy runners homed on that CPU and a fork/pipe storm; the watchdog never
# fires. Seen from the pinned tasks' side: a periodic probe pinned there
# keeps its ticks and never waits long for the CPU. Then beside a runner
# that never sleeps, alone on that CPU (ops.tick starts its ticks).
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
# Catches: stall
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1" --no-mid-tick
"$TICKLOAD" -n 2 --period-ms 50 --work-ms 20 --duration-s 12 --cgroup "$CG" >"$WORK/load" &
load=$!
( end=$((SECONDS + 10)); while ((SECONDS < end)); do hackbench --pipe --groups 4 --loops 100 >/dev/null 2>&1 || exit 1; done ) &
storm=$!
taskset -c 1 "$TICKLOAD" -n 2 --work-ms 1 --period-ms 20 --duration-s 10 --json >"$WORK/probe.json" &
probe=$!
taskset -c 1 stress-ng --cpu 2 --timeout 10s --metrics-brief >"$WORK/pinned" 2>&1 || fail "pinned stress-ng failed"
wait $probe || fail "the pinned probe failed"
wait $load || fail "tickload failed"
wait $storm || fail "the fork/pipe storm failed"
[[ "$(sched_state)" == enabled ]] || fail_catches stall "scheduler ejected (state $(sched_state))"
ops=$(awk '/metrc:.* cpu /{print $5}' "$WORK/pinned")
note "tasks pinned to tick CPU 1: bogo-ops $ops; $(grep total: "$WORK/load")"
[[ -n "$ops" && "${ops%.*}" -gt 0 ]] || fail_catches stall "tasks pinned to a tick CPU made no progress"
python3 - "$WORK/probe.json" <<'PY' || fail_catches stall "a task pinned to the tick CPU waited too long"
import json, sys
p = json.load(open(sys.argv[1]))["total"]
print(f"# pinned probe: {p['ticks']} of 1000 ticks, start lateness max {p['lateness_max_ms']:.0f} ms, "
      f"longest wait mid-work {p['stall_max_ms']:.0f} ms")
# 2 x 50 ticks/s for 10 s, sharing the CPU with two pinned hogs and the
# runners: at least half of them (the BPF mode keeps ~all, --userspace
# ~80 %); a wait of a second is a stall (the watchdog: 5 s)
sys.exit(0 if p["ticks"] >= 500 and p["lateness_max_ms"] < 1000 and p["stall_max_ms"] < 1000 else 1)
PY
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"

# A runner that never sleeps, alone on its tick CPU, past every deadline
# (ops.tick starts its next tick there: it must not refill its slice over
# a task waiting for that CPU, the probe pinned to it).
start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1"
"$TICKLOAD" -n 1 --period-ms 50 --work-ms 70 --game-server --duration-s 8 --cgroup "$CG" >"$WORK/load" &
load=$!
sleep 1
taskset -c 1 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s 6 --json >"$WORK/probe.json" ||
  fail "the pinned probe beside the never-sleeping runner failed"
wait $load || fail "tickload failed"
[[ "$(sched_state)" == enabled ]] || fail_catches stall "scheduler ejected beside a never-sleeping runner (state $(sched_state))"
python3 - "$WORK/probe.json" <<'PY' || fail_catches stall "a task pinned to a never-sleeping runner's CPU waited too long"
import json, sys
p = json.load(open(sys.argv[1]))["total"]
print(f"# beside a never-sleeping runner: pinned probe {p['ticks']} of 300 ticks, start lateness max "
      f"{p['lateness_max_ms']:.0f} ms, longest wait mid-work {p['stall_max_ms']:.0f} ms")
sys.exit(0 if p["lateness_max_ms"] < 1000 and p["stall_max_ms"] < 1000 else 1)
PY
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
check_dmesg_clean
