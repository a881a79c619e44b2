#!/usr/bin/env bash
# Four real game servers (Debian's minetest-server running minetest_game,
# 12 ms of work in every 50 ms step from the project's load mod,
# tests/servers/minetest.sh) beside 8 CPU hogs, every thread of the server
# processes selected by process name as an operator would, one tick per
# server process (tick=process: its clock, loop and helper threads share
# the step's tick and deadline): under scx_tick
# the servers' own late steps (read from the servers' step log) are at most
# 0.75 x EEVDF's in the same guest, and the hogs hurt under EEVDF (at least
# 5 % late, or the comparison means nothing). Figures: EEVDF's late steps
# and scx_tick's (the idle machine's and SCHED_FIFO's, the practical
# limit, are scripts/bench.sh --scenarios real's), each with the median wall time of a step's
# work (its CPU time is fixed: a longer one is a vCPU the host shared with
# others, which no guest scheduler sees) and the CPUs the hogs got (their
# /proc/PID/stat times), and scx_tick's ticks and misses against
# the servers' steps and late steps (docs/benchmarks.md "Real servers"):
# scx_tick counts one tick per server step (within 10 %, asserted where
# the servers kept their step rate: at most 20 % of their steps late; a
# server further behind never sleeps, and the grid counts a tick per period
# it ran, not per step: on a slower host, where a step's 12 ms of work took
# 32-46 ms of wall time beside the hogs and 34-74 % of the steps were late,
# 1.14-1.31 ticks per step, with three servers too) and a miss per
# late step (at least 0.5 x, issue 26's lower bound, less 0.1 misses/s;
# at most 2 x plus 1 miss/s: in a run with few late steps the step
# deadline misses the servers do not log late dominate, 0.87 misses/s for
# 0.18 late steps/s in one bench round).
# Catches: nolatesteps
# (nohelpers too where the servers keep their step rate, as on the hosts
# before 2026-11-30; on a slower host they fall behind under that breakage,
# 95.03 % of steps late, and ticks per step are not asserted:
# vm/bpf_decisions_match_the_model catches it on every host)
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/servers/minetest.sh"
trap 'mt_stop_all; cleanup' EXIT
mt_available || fail "minetest-server is not installed (scripts/setup.sh installs it)"
STEP_MS=50 SECS=${SCX_TICK_REAL_SECS:-12}

for i in 1 2 3 4; do mt_start s$i 12 $STEP_MS; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 180 || fail "server s$i logged no steps in 180 s"; done

phase() { # NAME: SECS seconds measured, tallied after the hogs stop
  measure_window mt_mark
  keep_window "$1"
}
tally() { # NAME: the servers' steps and late steps in its window
  local r
  load_window "$1"
  r=$(mt_late "$WIN_FROM" "$WIN_TO" $STEP_MS)
  set -- "$1" $r
  eval "${1}_steps=$2 ${1}_late=$3 ${1}_secs=$4 ${1}_hogs=$((WIN_HOGS * 1000000000 / WIN_NS))"
  note "$1: $3 of $2 steps late ($(pct "$3" "$2") %) in $4 s per server; a step's work took $5 ms (median); the hogs ran $(calc "$WIN_HOGS / 100 / ($WIN_NS / 1e9)" 2) CPUs"
}
stress-ng --cpu 8 --timeout 300s >/dev/null 2>&1 &
sleep 1
phase eevdf
start_scx --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/stats.jsonl"
sleep 1
phase scx
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "scx_tick exit status $SCX_RC"
stop_hogs
tally eevdf
tally scx
note "the hogs got $(calc "$scx_hogs / ($eevdf_hogs ? $eevdf_hogs : 1)" 2) x under scx_tick what they got under EEVDF"
grep "scx_tick summary: mt:" "$WORK/scx.out" | sed 's/^/# /'
# scx_tick's tick and miss rates over its steady seconds (the JSON lines
# but the first and the last), against the servers' own in the phase
r=$(group_rates "$WORK/stats.jsonl" mt) || fail "no scx_tick statistics to compare: $(tail -2 "$WORK/stats.jsonl")"
read -r tps mps <<<"$r"
# (the servers' rates over their own logs' span: the phase's marks take
# seconds, so it is longer than SECS)
sps=$(per_s "$scx_steps" "$scx_secs") lps=$(per_s "$scx_late" "$scx_secs")
per_step=$(calc "$tps / ($sps > 0 ? $sps : 1)" 2)
note "scx_tick counted $tps ticks/s and $mps misses/s for the 4 servers; they made $sps steps/s, $lps of them late (ticks per step $per_step, misses per late step $(calc "$mps / ($lps > 0.01 ? $lps : 0.01)" 2))"
((eevdf_late * 100 >= eevdf_steps * 5)) || fail "the hogs did not hurt the servers under EEVDF ($eevdf_late of $eevdf_steps late): nothing to compare"
# scx_tick's ticks are the servers' steps: within 10 % (measured 1.01-1.03
# per step; 1.22-1.23 while the main and connection threads' own wake-ups
# started ticks too, the nohelpers breakage)
if ((scx_late * 5 > scx_steps)); then
  note "the servers fell behind under scx_tick ($(pct $scx_late $scx_steps) % of steps late): ticks per step not asserted"
else
  (($(calc "($per_step >= 0.9 && $per_step <= 1.1)" 0))) \
    || fail_catches nohelpers "scx_tick counted $per_step ticks per server step, not within 10 % (helpers' wake-ups counted as steps?)"
fi
# scx_tick's misses are the servers' late steps: a late step's wake-up
# came late and the step ended in time, so only its start shows it
# (measured 1.05 misses per late step, 0.60 misses/s for 0.57 late steps/s;
# 0.08-0.13 per late step before late starts were counted, the
# nolatesteps breakage)
(($(calc "($mps >= $lps * 0.5 - 0.1 && $mps <= $lps * 2 + 1)" 0))) \
  || fail_catches nolatesteps "scx_tick counted $mps misses/s for $lps late steps/s, not between 0.5 x - 0.1 and 2 x + 1"
((scx_late * eevdf_steps * 4 <= eevdf_late * scx_steps * 3)) \
  || fail "scx_tick: $(pct $scx_late $scx_steps) % of steps late, more than 0.75 x EEVDF's $(pct $eevdf_late $eevdf_steps) %"
check_dmesg_clean
