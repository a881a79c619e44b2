#!/usr/bin/env bash
# One tick CPU, two runners of 20 ms per 50 ms tick, 8 CPU hogs: the runner
# behind the other is predicted to start 20 ms late at home, so a non-tick
# CPU takes it before its other work (the hog there is preempted). From the
# workload's side: ticks start on non-tick CPUs, and scx_tick misses at
# most a quarter of what the default scheduler misses in the same guest.
# Catches: nospill
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 2 --period-ms 50 --work-ms 20 --duration-s 10 --cgroup "$CG" --json)

stress-ng --cpu 8 --timeout 60s >/dev/null 2>&1 &
"$TICKLOAD" "${LOAD[@]}" >"$WORK/eevdf.json" || fail "tickload under EEVDF failed"
start_scx --tick-cgroup tick --tick-cpus 1
"$TICKLOAD" "${LOAD[@]}" >"$WORK/scx.json" || fail "tickload under scx_tick failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
stop_hogs

eevdf=$(json_field "$WORK/eevdf.json" misses)
scx=$(json_field "$WORK/scx.json" misses)
ticks=$(json_field "$WORK/scx.json" ticks)
note "2 x 20 ms, 1 tick CPU, 8 hogs: misses EEVDF $eevdf, scx_tick $scx (of $ticks ticks)"
((ticks > 0)) || fail "no ticks ran under scx_tick"
((scx * 4 <= eevdf)) || fail_catches nospill "scx_tick missed $scx deadlines, more than a quarter of EEVDF's $eevdf"
python3 - "$WORK/scx.json" <<'PY' || fail_catches nospill "no tick started on a non-tick CPU"
import json, sys
r = json.load(open(sys.argv[1]))
n = {}
for runner in r["runners"]:
    for c, k in runner["cpus"].items():
        n[c] = n.get(c, 0) + k
away = sum(k for c, k in n.items() if c != "1")
print("# ticks per CPU:", n, "- on non-tick CPUs:", away)
sys.exit(0 if away * 4 >= sum(n.values()) else 1)
PY
check_dmesg_clean
