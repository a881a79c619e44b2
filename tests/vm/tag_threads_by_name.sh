#!/usr/bin/env bash
# `scx_tick tag` moves only the threads named like tick runners of a process
# into a threaded tick group, scx_tick schedules them as runners, and
# `untag` moves them back.
# Catches: tagall
# guest: shared
source "$(dirname "$0")/../lib.sh"
"$TICKLOAD" -n 3 --work-ms 2 --duration-s 14 >"$WORK/load" &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 4 ]] && break; sleep 0.1; done
"$SCX" tag --group world --pid $pid --thread-name '^Tick Runner' 2>"$WORK/tag.err" || fail "tag failed: $(cat "$WORK/tag.err")"
note "$(cat "$WORK/tag.err")"
TICKS=/sys/fs/cgroup/scx_tick/world/ticks
[[ "$(cat $TICKS/cgroup.type)" == threaded ]] || fail "tick group is not threaded"
tagged=$(wc -l <$TICKS/cgroup.threads)
((tagged == 3)) || fail_catches tagall "$tagged threads tagged, expected the 3 runners: $(cat $TICKS/cgroup.threads)"
grep -qx "$pid" $TICKS/cgroup.threads && fail "the main thread was tagged too"
start_scx --tick-cgroup scx_tick/world/ticks
# 5 s scheduled by scx_tick while the tagged runners tick: it must count
# their 20 ticks per second each, no fewer (runners not recognised) and no
# more (other threads taken for runners)
t0=$(date +%s.%N); sleep 5; t1=$(date +%s.%N)
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
wait $pid || fail "tickload failed"
read_totals
expected=$(python3 -c "import sys; print(round(3 * (float(sys.argv[2]) - float(sys.argv[1])) / 0.05))" "$t0" "$t1")
note "ticks counted for the 3 tagged runners in $expected expected: $tot_ticks"
((tot_ticks * 100 >= expected * 85 && tot_ticks * 100 <= expected * 115 + 600)) \
  || fail "$tot_ticks ticks counted while the 3 tagged runners ran $expected"

# untag: a live process's runners go back to the domain
"$TICKLOAD" -n 2 --work-ms 1 --duration-s 4 >/dev/null &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 3 ]] && break; sleep 0.1; done
"$SCX" tag --group world --pid $pid --thread-name '^Tick Runner' 2>/dev/null || fail "second tag failed"
"$SCX" untag --group world --pid $pid --thread-name '^Tick Runner' 2>/dev/null || fail "untag failed"
[[ ! -s $TICKS/cgroup.threads ]] || fail "threads left in the tick group: $(cat $TICKS/cgroup.threads)"
set +e
"$SCX" tag --group world --tid 999999 2>"$WORK/err"; rc=$?
set -e
((rc != 0)) && grep -q "does not exist" "$WORK/err" || fail "a vanished thread was not reported: $(cat "$WORK/err")"
wait $pid
check_dmesg_clean
