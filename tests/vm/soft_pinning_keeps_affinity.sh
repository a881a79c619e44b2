#!/usr/bin/env bash
# --pin soft (the default) runs each runner on its home CPU without touching
# its affinity: /proc/<tid>/status still allows every CPU while every tick
# starts on the home CPU once it has one (stealing off, so nothing may move
# it).
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=2" --no-work-stealing
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 5 --cgroup "$CG" --json >"$WORK/load" &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 3 ]] && break; sleep 0.1; done
tids=$(ls /proc/$pid/task | grep -vx $pid)
# sampled while the runners tick, across several 200 ms pinning scans
allowed=$(for _ in $(seq 15); do
  for t in $tids; do awk '/^Cpus_allowed_list/{print $2}' /proc/$t/status 2>/dev/null; done
  sleep 0.1
done | sort -u)
wait $pid || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
note "soft-pinned runners' Cpus_allowed_list while running: $allowed"
[[ "$allowed" == "0-$(($(nproc) - 1))" ]] || fail "soft pinning changed the affinity: $allowed"
# a runner has no home until the next 200 ms scan sees it: its first ticks
# (a few; under emulation the scan itself may lag: allow half a second of
# them, 10 at 20 TPS) may run on any tick CPU from the global queue
python3 - "$WORK/load" <<'PY' || fail "ticks ran away from home CPU 2"
import json, sys
r = json.load(open(sys.argv[1]))
print("# CPUs the ticks started on, per runner:", [runner["cpus"] for runner in r["runners"]])
away = [sum(n for c, n in runner["cpus"].items() if c != "2") for runner in r["runners"]]
sys.exit(0 if all(a <= 10 for a in away) and sum(runner["ticks"] for runner in r["runners"]) > 0 else 1)
PY
check_dmesg_clean
