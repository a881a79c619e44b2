#!/usr/bin/env bash
# Live runner threads become tick runners when moved into the group while
# they tick (cgroup.threads) and stop being runners when moved out, as the
# per-interval stats show; a child cgroup counts; a group removed while
# running causes no error.
# A missing cgroup at start is refused with a clear message when asked to
# (--missing-cgroup refuse).
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
# guest: shared
source "$(dirname "$0")/../lib.sh"
set +e
"$SCX" --missing-cgroup refuse --tick-cgroup no/such/group >"$WORK/out" 2>"$WORK/err"; rc=$?
set -e
((rc != 0)) || fail "a missing tick cgroup was accepted"
grep -q "does not exist" "$WORK/err" || fail "unclear message: $(cat "$WORK/err")"
note "missing group: $(cat "$WORK/err")"

# Live runner threads moved in and out of the tick group while they tick:
# a threaded subtree tp (domain) with the tick group tp/in (threaded); the
# workload's runner threads start in tp, move to tp/in, then back.
TP=$(make_cgroup tp)
mkdir "$TP/in"
echo threaded >"$TP/in/cgroup.type"
start_scx --tick-cgroup tp/in --stats 1 --stats-json "$WORK/stats.jsonl"
(echo $BASHPID >"$TP/cgroup.procs" && exec "$TICKLOAD" -n 2 --work-ms 2 --duration-s 60) >/dev/null &
load=$!
for _ in $(seq 50); do [[ $(ls /proc/$load/task 2>/dev/null | wc -l) -ge 3 ]] && break; sleep 0.1; done
runners=$(ls /proc/$load/task | grep -vx $load)
# the first stats line (one a second) computed after this call marks a phase
# boundary: its timestamp_s, not its arrival, since a slow guest can write a
# line computed before the moves after them; kept raw and read at the end (a
# python start under emulation would delay the moves)
mark() {
  local since ts
  since=$(date +%s.%N)
  for _ in $(seq 50); do
    ts=$(tail -1 "$WORK/stats.jsonl" | grep -o '"timestamp_s":[0-9.]*' | cut -d: -f2)
    [[ -n $ts ]] && awk -v a="$ts" -v b="$since" 'BEGIN { exit !(a > b) }' && break
    sleep 0.1
  done
  tail -1 "$WORK/stats.jsonl" >"$WORK/mark$1"
}
ticks_at() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["groups"]["tp/in"]["ticks"])' "$WORK/mark$1"; }
sleep 2; mark 0
sleep 4; mark 1 # outside: no ticks
for t in $runners; do echo "$t" >"$TP/in/cgroup.threads"; done
sleep 4; mark 2 # inside: 2 runners x 20 TPS
for t in $runners; do echo "$t" >"$TP/cgroup.threads"; done
sleep 4; mark 3 # outside again
kill -0 $load || fail "tickload ended early"
kill $load; wait $load 2>/dev/null || true
t0=$(ticks_at 0) t1=$(ticks_at 1) t2=$(ticks_at 2) t3=$(ticks_at 3)
out1=$((t1 - t0)) in=$((t2 - t1)) out2=$((t3 - t2))
note "ticks counted per ~4 s phase while the live runners were: outside $out1, inside $in, outside again $out2 (2 runners x 20 TPS: ~160 inside)"
((out1 <= 2)) || fail "$out1 ticks counted while no runner was in the group"
# a phase boundary is a stats line up to 1 s late: inside at least 60 % of
# 160, outside again at most that 1 s of inside (40) plus the moves
((in >= 96)) || fail "only $in ticks counted while the runners were in the group"
((out2 * 4 <= in)) || fail "$out2 ticks counted after the runners left the group (inside: $in)"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"

# A child cgroup below the group counts too; then the group disappears
# while scx_tick runs: no error, it stays enabled and counts nothing more.
CG=$(make_cgroup tick)
OUT=$(make_cgroup outside)
start_scx --tick-cgroup tick
mkdir "$CG/child"
"$TICKLOAD" -n 1 --work-ms 2 --duration-s 2 --cgroup "$CG/child" --json >"$WORK/child.json"
echo $$ >/sys/fs/cgroup/cgroup.procs
rmdir "$CG/child" "$CG"
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 3 --cgroup "$OUT" >/dev/null
[[ "$(sched_state)" == enabled ]] || fail "scheduler left after the group was removed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
own=$(json_field "$WORK/child.json" ticks)
note "child cgroup: scx_tick counted $tot_ticks ticks, the workload ran $own; then 120 outside"
# the child's ticks and none of the 120 outside ones; every wake-up of a
# thread in the group is a tick, so its main thread's (start-up I/O over the
# guest's 9p root, spawning, joining) add a few dozen
((tot_ticks * 10 >= own * 9 && tot_ticks <= own + 60)) || fail "ticks=$tot_ticks for a child workload of $own ticks"
check_dmesg_clean
