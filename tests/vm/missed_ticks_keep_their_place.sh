#!/usr/bin/env bash
# A runner that misses its deadlines, but sleeps between its ticks, is not
# overrun work: it keeps its place in earliest-deadline-first order. Two
# groups hard-pinned on tick CPU 1 (as vm/groups_keep_edf_order):
# "long", deadline 50 ms, three runners of 10 ms per 50 ms tick, and
# "short", deadline 5 ms, one runner of 8 ms per tick (more than its
# deadline) that wakes 5 ms into the long runners' tick. Each short tick is
# still running at its deadline, so it is missed and replenished; the
# runner then ends its work and sleeps, and its next wake-up falls in the
# replenished tick. Only a runner on a CPU at a deadline a second time
# without sleeping is overrun work, ranked a period later. Until
# 2026-12-02 a sleep did not end that: from its second tick on the short
# runner was demoted for good, each wake-up continued a replenished tick,
# and it waited behind the long runners' 30 ms (in vm/groups_keep_edf_order
# a single late tick did the same: 159 of 160 missed on a second run in one
# guest). From the workload's side: the short runner's ticks start within
# 10 ms of their time (it preempts a long runner at once; demoted, it waits
# about 25 ms), and the long group keeps its ticks; scx_tick counts the
# short runner's misses (the replenishments this is about happened). Hard
# pinned, the runners wake without ops.select_cpu: the rule's twin there
# (select_runner_cpu()) is not exercised here.
# Catches: overrunsticks
# guest: shared
source "$(dirname "$0")/../lib.sh"
LONG=$(make_cgroup long) SHORT=$(make_cgroup short)
start_scx --tick-cpus 1,2 --tick-cgroup "long,cpus=1" --tick-cgroup "short,cpus=1,deadline=5" --pin hard
"$TICKLOAD" -n 3 --work-ms 10 --phase-ms 0 --duration-s 8 --cgroup "$LONG" --json >"$WORK/long.json" &
long=$!
"$TICKLOAD" -n 1 --work-ms 8 --deadline-ms 5 --phase-ms 5 --duration-s 8 --cgroup "$SHORT" --json \
  --ticks-log "$WORK/short.ticks" >"$WORK/short.json" &
short=$!
wait $long || fail "the long group's tickload failed"
wait $short || fail "the short group's tickload failed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read -r l_ticks l_misses <<<"$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["ticks"], r["misses"])' "$WORK/long.json")"
s_counted=$(group_stat short misses)
# the ticks log: name, due, begin, end (ns)
read -r s_ticks s_late s_p50 <<<"$(python3 - "$WORK/short.ticks" <<'PY'
import sys
waits = sorted(int(l.split('\t')[2]) - int(l.split('\t')[1]) for l in open(sys.argv[1]) if l.strip())
print(len(waits), sum(w > 10_000_000 for w in waits), f"{waits[len(waits) // 2] / 1e6:.1f}" if waits else "-")
PY
)"
note "short (deadline 5 ms, 8 ms of work): $s_late of $s_ticks ticks started more than 10 ms late, p50 start lateness $s_p50 ms, $s_counted misses counted by scx_tick; long: $l_misses of $l_ticks missed"
((s_ticks >= 120 && l_ticks >= 360)) || fail "too few ticks ran: short $s_ticks, long $l_ticks"
((s_counted * 2 >= s_ticks)) || fail "scx_tick counted $s_counted misses of the short runner's $s_ticks ticks (each misses its 5 ms deadline): the replenishment this checks did not happen"
((l_misses * 10 <= l_ticks)) || fail "the long group missed $l_misses of $l_ticks"
((s_late * 10 <= s_ticks)) || fail_catches overrunsticks "$s_late of $s_ticks short ticks started more than 10 ms late: the runner that misses its deadlines was ranked behind later deadlines, as overrun work"
check_dmesg_clean
