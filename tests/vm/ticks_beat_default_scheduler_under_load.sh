#!/usr/bin/env bash
# With 8 CPU hogs outside the tick group, tick runners miss fewer deadlines
# under scx_tick than under the kernel's default scheduler in the same guest,
# and every tick runs on a tick CPU.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 4 --period-ms 50 --work-ms 18 --duration-s 10 --cgroup "$CG" --json)

stress-ng --cpu 8 --timeout 60s >/dev/null 2>&1 &
"$TICKLOAD" "${LOAD[@]}" >"$WORK/eevdf.json" || fail "tickload under EEVDF failed"

start_scx --tick-cgroup tick --tick-cpus 1,2
"$TICKLOAD" "${LOAD[@]}" >"$WORK/scx.json" || fail "tickload under scx_tick failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"

eevdf=$(json_field "$WORK/eevdf.json" misses)
scx=$(json_field "$WORK/scx.json" misses)
ticks=$(json_field "$WORK/scx.json" ticks)
note "deadline misses with 8 hogs: EEVDF $eevdf, scx_tick $scx (of $ticks ticks)"
((ticks > 0)) || fail "no ticks ran under scx_tick"
((scx < eevdf)) || fail "scx_tick missed $scx deadlines, not fewer than EEVDF's $eevdf"

# every tick started on a tick CPU (1 or 2)
python3 - "$WORK/scx.json" <<'PY' || fail "ticks ran outside the tick CPUs"
import json, sys
r = json.load(open(sys.argv[1]))
cpus = {int(c) for runner in r["runners"] for c in runner["cpus"]}
print("# tick CPUs used:", sorted(cpus))
sys.exit(0 if cpus <= {1, 2} else 1)
PY
check_dmesg_clean
