#!/usr/bin/env bash
# A second real server, of another kind: two OpenTTD dedicated servers
# (Debian's openttd, a 2048 x 2048 map whose tile loop costs about 10 ms of
# every 30 ms tick alone, tests/servers/openttd.sh) beside 8 CPU hogs, every
# thread of the server processes selected by process name, one tick per
# process, its period OpenTTD's 30 ms tick, its deadline two ticks (the
# server catches up on a late tick: one that ends within the next tick's
# time is not late to the game). OpenTTD's game loop is one thread that sleeps until its tick
# and catches up when late, dropping ticks 5 ticks behind, so its own
# measure is the game speed: the ticks it ran over the ticks due. Under
# scx_tick the servers' lost ticks close at least a third of the gap from
# EEVDF's to SCHED_FIFO's (every server thread SCHED_FIFO: the practical
# limit) in the same guest: lost(scx_tick) <= lost(FIFO) + (lost(EEVDF) -
# lost(FIFO)) * 2 / 3, and EEVDF must lose at least 3 points more than
# FIFO, or the comparison means nothing. FIFO is the reference because the
# map's tile loop is instructions, not a calibrated time: on a slower host
# the emulated vCPUs run it slower, and where a whole vCPU per server does
# not keep up no scheduler can (on one host FIFO's servers lost 24-32 % of
# their ticks, where the bench's records on faster hosts have 0-12 %).
# There scx_tick closed 51-62 % of the gap (it lost 49-56 %, EEVDF
# 80-86 %; three runs): a server that never sleeps loses ticks under scx_tick that
# FIFO keeps (docs/benchmarks.md, stop 51's host), so the bound is a
# third, not a half. Figures: each phase's
# game speed and late ticks (a tick stamped more than 1.5 ticks after the
# one before by a real-time reader of the server's log) and overdue ticks
# (more than the deadline after the one before: what scx_tick's misses mean
# in that log, tests/servers/openttd.sh), the CPUs the hogs got, and
# scx_tick's ticks and misses against the servers' ticks.
# (the idle machine and the peers: scripts/bench.sh --scenarios real-sim.)
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/servers/openttd.sh"
trap 'ottd_stop_all; cleanup' EXIT
ottd_available || fail "openttd or its map is missing (scripts/setup.sh installs and makes them)"
SECS=${SCX_TICK_REAL_SECS:-10}

for i in 1 2; do ottd_start s$i; done
for i in 1 2; do ottd_wait_ticks s$i 60 240 || fail "server s$i logged no ticks in 240 s: $(tail -3 "$WORK/ottd-s$i/ticks.log")"; done

phase() { # NAME: SECS seconds measured, tallied after the hogs stop
  measure_window ottd_mark
  keep_window "$1"
}
tally() { # NAME: the servers' ticks due, run, late, behind and overdue in its window
  local r
  load_window "$1"
  r=$(ottd_late "$WIN_FROM" "$WIN_TO")
  set -- "$1" $r
  eval "${1}_due=$2 ${1}_run=$3 ${1}_late=$4 ${1}_secs=$5 ${1}_behind=$6 ${1}_overdue=$7 ${1}_hogs=$((WIN_HOGS * 1000000000 / WIN_NS))"
  note "$1 (at $WIN_AT s): ran $3 of $2 ticks due (lost $(pct $(($2 > $3 ? $2 - $3 : 0)) "$2") %), $4 late ($(pct "$4" "$3") %), $6 behind schedule ($(pct "$6" "$3") %), $7 overdue ($(pct "$7" "$3") %) in $5 s per server; the hogs ran $(calc "$WIN_HOGS / 100 / ($WIN_NS / 1e9)" 2) CPUs"
}
lost() { eval "echo \$(( ${1}_due > ${1}_run ? ${1}_due - ${1}_run : 0 ))"; }
# scx_tick first, loaded before the hogs start (the verifier is slow in a
# loaded emulated guest), then EEVDF with the same hogs
start_scx --tick-threads "ottd,process=^openttd\$,period=$OTTD_TICK_MS,deadline=$OTTD_DEADLINE_MS,tick=process" --stats-json "$WORK/stats.jsonl"
stress-ng --cpu 8 --timeout 300s >/dev/null 2>&1 &
sleep 1
phase scx
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
phase eevdf
ottd_fifo 50
phase fifo
ottd_fifo 0
stop_hogs
tally scx
tally eevdf
tally fifo
note "the hogs got $(calc "$scx_hogs / ($eevdf_hogs ? $eevdf_hogs : 1)" 2) x under scx_tick what they got under EEVDF"
grep "scx_tick summary: ottd:" "$WORK/scx.out" | sed 's/^/# /'
r=$(group_rates "$WORK/stats.jsonl" ottd) || fail "no scx_tick statistics to compare: $(tail -2 "$WORK/stats.jsonl")"
read -r tps mps <<<"$r"
# (the servers' rates over their own logs' span: the phase's marks take
# seconds, so it is longer than SECS)
rps=$(per_s "$scx_run" "$scx_secs") lps=$(per_s "$scx_late" "$scx_secs") bps=$(per_s "$scx_behind" "$scx_secs") ops=$(per_s "$scx_overdue" "$scx_secs")
note "scx_tick counted $tps ticks/s and $mps misses/s for the 2 servers; they ran $rps ticks/s, $lps of them late, $ops overdue, $bps behind schedule (scx_tick's ticks per server tick $(calc "$tps / ($rps > 0 ? $rps : 1)" 2), misses per overdue tick $(calc "$mps / ($ops > 0.01 ? $ops : 0.01)" 2), per late tick $(calc "$mps / ($lps > 0.01 ? $lps : 0.01)" 2), per tick behind $(calc "$mps / ($bps > 0.01 ? $bps : 0.01)" 2))"
# each phase must have measured the servers (a stopped log measures nothing)
for p in scx eevdf fifo; do
  eval "((${p}_due >= 100))" || fail "$p: the servers logged too few ticks to measure"
done
# lost ticks in basis points of the ticks due, phase by phase
bp() { eval "echo \$(( $(lost "$1") * 10000 / ${1}_due ))"; }
e_bp=$(bp eevdf) f_bp=$(bp fifo) s_bp=$(bp scx)
((e_bp >= f_bp + 300)) || fail "the hogs did not slow the servers under EEVDF more than under SCHED_FIFO (lost $(calc "$e_bp / 100" 2) % and $(calc "$f_bp / 100" 2) %): nothing to compare"
((3 * s_bp <= f_bp + 2 * e_bp)) \
  || fail "scx_tick: the servers lost $(calc "$s_bp / 100" 2) % of their ticks, more than two thirds of the way from SCHED_FIFO's $(calc "$f_bp / 100" 2) % to EEVDF's $(calc "$e_bp / 100" 2) %"
check_dmesg_clean
