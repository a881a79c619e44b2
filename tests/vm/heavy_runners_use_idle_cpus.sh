#!/usr/bin/env bash
# More tick work than the tick CPUs hold (6 runners x 20 ms per 50 ms tick =
# 2.4 CPUs on 2 tick CPUs of 4) on an otherwise idle guest: runners spill
# over to the idle CPUs, so scx_tick misses about as few deadlines as the
# kernel's default scheduler in the same guest. Confined to its tick CPUs it
# missed 69 %; the bound is EEVDF + 5 points: measured, EDF stays 1-3 points
# behind here (two of six in-phase runners share a CPU and end at 40 ms of
# 50, where EEVDF's time slicing ends all near 30 ms; see
# docs/benchmarks.md), and emulation adds noise. The same load with the
# defaults (3 tick CPUs here) is held to the same bound.
# Catches: nospill
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 6 --period-ms 50 --work-ms 20 --duration-s 10 --cgroup "$CG" --json)

"$TICKLOAD" "${LOAD[@]}" >"$WORK/eevdf.json" || fail "tickload under EEVDF failed"
eevdf=$(json_field "$WORK/eevdf.json" miss_pct)
# case name, then scx_tick's flags beside --tick-cgroup
held_to_eevdf() {
  local name=$1 scx; shift
  start_scx --tick-cgroup tick "$@"
  "$TICKLOAD" "${LOAD[@]}" >"$WORK/$name.json" || fail "$name: tickload under scx_tick failed"
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "$name: scx_tick exit status $SCX_RC"
  scx=$(json_field "$WORK/$name.json" miss_pct)
  note "6 x 20 ms on an idle guest ($name): misses EEVDF ${eevdf}%, scx_tick ${scx}%"
  python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) + 5 else 1)" "$scx" "$eevdf" \
    || fail_catches nospill "$name: scx_tick missed ${scx}% of deadlines, EEVDF ${eevdf}%: runners did not use the idle CPUs"
}
held_to_eevdf spill --tick-cpus 2
held_to_eevdf defaults
check_dmesg_clean
