#!/usr/bin/env bash
# `scx_tick tag` moves only the threads named like tick runners of a process
# into a threaded tick group, scx_tick schedules them as runners, and
# `untag` moves them back.
source "$(dirname "$0")/../lib.sh"
"$TICKLOAD" -n 3 --work-ms 2 --duration-s 10 >"$WORK/load" &
pid=$!
for _ in $(seq 50); do [[ $(ls /proc/$pid/task | wc -l) -ge 4 ]] && break; sleep 0.1; done
"$SCX" tag --group world --pid $pid --thread-name '^Tick Runner' 2>"$WORK/tag.err" || fail "tag failed: $(cat "$WORK/tag.err")"
note "$(cat "$WORK/tag.err")"
TICKS=/sys/fs/cgroup/scx_tick/world/ticks
[[ "$(cat $TICKS/cgroup.type)" == threaded ]] || fail "tick group is not threaded"
tagged=$(wc -l <$TICKS/cgroup.threads)
((tagged == 3)) || fail "$tagged threads tagged, expected the 3 runners: $(cat $TICKS/cgroup.threads)"
grep -qx "$pid" $TICKS/cgroup.threads && fail "the main thread was tagged too"
start_scx --tick-cgroup scx_tick/world/ticks
wait $pid || fail "tickload failed"
stop_scx INT
read_totals
note "ticks counted for the tagged runners: $tot_ticks"
((tot_ticks >= 200)) || fail "only $tot_ticks ticks counted for 3 runners x 10 s x 20 TPS (600 at most; the scheduler attaches seconds into the run under emulation)"

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
