#!/usr/bin/env bash
# `scx_tick tag` moves only the threads named like tick runners of a process
# into a threaded tick group, scx_tick schedules them as runners, and
# `untag` moves them back.
# Catches: tagall
# guest: shared
source "$(dirname "$0")/../lib.sh"
# long enough to outlast scx_tick's start (7-10 s on a slow host; with 14
# s the runners ended inside the window there and 0.6-0.9 of its ticks were
# counted), ended by SIGTERM after the window
"$TICKLOAD" -n 3 --work-ms 2 --duration-s 120 >"$WORK/load" &
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
# more (other threads taken for runners). Counted between its first and
# last statistics line, so the time scx_tick takes to start and stop
# (seconds on a slow host) does not count.
sleep 5
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
kill -TERM $pid
wait $pid || fail "tickload failed"
# (no process substitution: the guest has no /dev/fd)
vals=$(python3 - "$STATS_JSON" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if r.get("sample") == "interval"]
ticks = lambda r: sum(g["ticks"] for g in r["groups"].values())
if len(rows) < 2:
    print(0, 0)
else:
    print(ticks(rows[-1]) - ticks(rows[0]), round(3 * (rows[-1]["timestamp_s"] - rows[0]["timestamp_s"]) / 0.05))
PY
)
read -r counted expected <<<"$vals"
((expected >= 150)) || fail "scx_tick printed statistics over less than 2.5 s of the 5 s ($STATS_JSON)"
note "ticks counted for the 3 tagged runners in $expected expected: $counted"
((counted * 100 >= expected * 85 && counted * 100 <= expected * 115)) \
  || fail "$counted ticks counted while the 3 tagged runners ran $expected"

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
