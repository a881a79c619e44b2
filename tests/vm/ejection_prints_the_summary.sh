#!/usr/bin/env bash
# When the kernel ejects scx_tick (here: SysRq-S, "disable sched_ext", which
# any admin can press), scx_tick notices by itself, says why, prints its
# exit summary and totals with the ticks it counted (and the same in its
# --stats-json exit line), and leaves sched_ext disabled and the runners
# back in the default scheduler.
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
start_scx --tick-cpus 1,2 --tick-cgroup tick
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 6 --cgroup "$CG" --json >"$WORK/load.json" &
load=$!
sleep 3
sysrq=$(cat /proc/sys/kernel/sysrq)
echo 1 >/proc/sys/kernel/sysrq
echo S >/proc/sysrq-trigger
echo "$sysrq" >/proc/sys/kernel/sysrq
# scx_tick must leave by itself: no signal is sent
for _ in $(seq 300); do kill -0 "$SCX_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SCX_PID" 2>/dev/null && fail "scx_tick still runs 30 s after the kernel ejected it"
set +e; wait "$SCX_PID"; rc=$?; set -e
SCX_PID=""
wait "$load" || fail "the workload failed after the ejection"
note "exit status $rc; $(grep -m1 'EXIT' "$WORK/scx.err")"
grep -q "EXIT:.*sysrq" "$WORK/scx.err" || fail "scx_tick did not say why it left: $(tail -3 "$WORK/scx.err")"
summary=$(grep "^scx_tick summary: tick:" "$WORK/scx.out" "$WORK/scx.err" | head -1) || fail "no exit summary after the ejection"
note "$summary"
grep -q "^scx_tick totals:" "$WORK/scx.out" "$WORK/scx.err" || fail "no totals line after the ejection"
ticks=$(sed -E 's/.* ticks ([0-9]+) .*/\1/' <<<"$summary")
# about 3 s of 2 runners at 20 ticks/s ran under scx_tick before the ejection
((ticks >= 60)) || fail "the summary counts $ticks ticks; the runners ticked ~120 times under scx_tick"
# the machine output ends with its exit line too, with the same count
json_ticks=$(group_stat tick ticks)
((json_ticks == ticks)) || fail "--stats-json's exit line counts $json_ticks ticks, the summary $ticks"
[[ "$(sched_state)" == disabled ]] || fail "sched_ext is $(sched_state) after the ejection"
# like every scx scheduler, an ejection is an error exit (README: exit status)
((rc == 1)) || fail "scx_tick exited $rc after the kernel ejected it (expected 1)"
