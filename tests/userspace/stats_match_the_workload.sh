#!/usr/bin/env bash
# --userspace keeps the BPF mode's deadline-miss statistics, from rustland's
# run timestamps: a group whose work exceeds its deadline reports the misses
# tickload counted (within 5%), a light group reports no miss the workload
# did not see, and --stats-json streams lines whose counters never go back.
source "$(dirname "$0")/../lib.sh"
MODE_ARGS=(--userspace)
HEAVY=$(make_cgroup heavy)
LIGHT=$(make_cgroup light)
start_scx --tick-cpus 1,2 --tick-cgroup heavy,period=50,deadline=20,cpus=1 \
  --tick-cgroup light,period=50,cpus=2 --stats 1 --stats-json "$WORK/stats.jsonl"
"$TICKLOAD" -n 1 --period-ms 50 --deadline-ms 20 --work-ms 25 --duration-s 8 --cgroup "$HEAVY" --json >"$WORK/heavy.json" &
heavy=$!
"$TICKLOAD" -n 2 --period-ms 50 --work-ms 1 --duration-s 8 --cgroup "$LIGHT" --json >"$WORK/light.json" &
light=$!
wait $heavy $light || fail "tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
grep "scx_tick summary:" "$WORK/scx.out" | sed 's/^/# /'
grep -q "heavy: .*ticks/s" "$WORK/scx.out" || fail "no live line for the heavy group: $(head -3 "$WORK/scx.out")"
field() { grep "scx_tick summary: $1:" "$WORK/scx.out" | sed -E "s/.* $2 ([0-9]+).*/\1/"; }
scx_heavy=$(field heavy misses)
scx_light=$(field light misses)
own_heavy=$(json_field "$WORK/heavy.json" misses)
own_light=$(json_field "$WORK/light.json" misses)
note "heavy: scx_tick --userspace $scx_heavy misses, tickload $own_heavy; light: $scx_light, tickload $own_light"
((own_heavy > 100)) || fail "the heavy group should miss nearly every tick (tickload: $own_heavy)"
python3 -c "import sys; a,b=int(sys.argv[1]),int(sys.argv[2]); sys.exit(0 if abs(a-b) <= 0.05*b else 1)" \
  "$scx_heavy" "$own_heavy" || fail "heavy misses differ by more than 5%: scx_tick $scx_heavy, tickload $own_heavy"
# Every thread of the group is a runner to the scheduler: tickload's main
# thread and each runner's first and last wake-ups (spawn to barrier, last
# tick to exit) are ticks the workload does not count, and under emulation
# one of them can take longer than a period. Allow one such miss per thread
# (3); a real miscount of the workload's 320 ticks would show more.
((scx_light <= own_light + 3)) || fail "scx_tick reports $scx_light misses for the light group, the workload saw $own_light"
python3 - "$WORK/stats.jsonl" <<'PY' || fail "the JSON stream is broken"
import json, sys
prev = None
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 5, f"only {len(lines)} JSON lines"
for l in lines:
    m = json.loads(l)
    for g, v in m["groups"].items():
        for k in ("ticks", "misses", "late_starts", "steals"):
            if prev is not None:
                assert v[k] >= prev["groups"][g][k], (g, k, v[k], prev["groups"][g][k])
    prev = m
print("# JSON lines:", len(lines), "last heavy:", {k: prev["groups"]["heavy"][k] for k in ("ticks", "misses", "interval_miss_pct")})
PY
check_dmesg_clean
