#!/usr/bin/env bash
# guest: shared
# Three runners that never sleep (70 ms of work per 50 ms tick: a game
# server that is always behind) share one tick CPU for 30 s, with the
# sched_ext watchdog at 5 s. A runner still running at its deadline starts
# its next tick a period later (replenishment), so they take turns: each
# keeps ticking and none waits anywhere near the watchdog, nor does a
# task pinned to the same CPU (the stall probe). scx_tick stays attached.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1 --tick-cgroup tick --watchdog-ms 5000
# the runners may use CPU 1 only: they must share it
taskset -c 1 "$TICKLOAD" -n 3 --work-ms 70 --game-server --duration-s 30 \
  --cgroup "$CG" --json >"$WORK/runners.json" &
runners=$!
# the stall probe: a light periodic task outside the group, pinned there too
taskset -c 1 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 20 --duration-s 30 --json >"$WORK/probe.json" &
probe=$!
wait $runners || fail "the runners' tickload failed"
wait $probe || fail "the probe failed"
[[ "$(sched_state)" == enabled ]] || fail "scx_tick was ejected (state $(sched_state)): $(tail -3 "$WORK/scx.err")"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
python3 - "$WORK/runners.json" "$WORK/probe.json" <<'PY' || fail "a task waited too long: see above"
import json, sys
runners, probe = (json.load(open(f)) for f in sys.argv[1:3])
# ms: turns come every ~100 ms; records/tests 2026-11-24 to 26: runners'
# longest mid-tick wait 25-78 ms, the probe's start lateness 5-82 ms, its
# longest mid-work wait 0-4 ms
bound = 200.0
probe_stall = 20.0
ok = True
for r in runners["runners"]:
    print(f"# {r['name']}: {r['ticks']} ticks, longest wait for a CPU mid-tick {r['stall_max_ms']:.0f} ms, start lateness max {r['lateness_max_ms']:.0f} ms")
    ok &= r["ticks"] >= 30 * 20 / 3 / 3 and r["stall_max_ms"] < bound
p = probe["runners"][0]
print(f"# probe: {p['ticks']} ticks, start lateness max {p['lateness_max_ms']:.0f} ms, longest mid-work wait {p['stall_max_ms']:.0f} ms")
ok &= p["lateness_max_ms"] < bound and p["stall_max_ms"] < probe_stall
sys.exit(0 if ok else 1)
PY
check_dmesg_clean
