#!/usr/bin/env bash
# `scx_tick suggest --pid PID` watches a running process and proposes the
# tick group of the threads that do its work every tick: for tickload's two
# runners (10 ms of work per 50 ms tick), their names and not the main
# thread (which sleeps in join), one tick per thread (a pool of loops, not
# one step spread over threads); the proposal is a valid configuration that
# selects them. A process that does nothing gets a clear error.
source "$(dirname "$0")/../lib.sh"
"$TICKLOAD" -n 2 --work-ms 10 --period-ms 50 --duration-s 8 >/dev/null &
pid=$!
sleep 0.5
"$SCX" suggest --pid $pid --seconds 3 --name world >"$WORK/out" 2>&1 || fail "suggest failed: $(cat "$WORK/out")"
sed 's/^/# /' "$WORK/out"
grep -qxF 'thread_name = "^(Tick Runner \\#0$|Tick Runner \\#1$)"' "$WORK/out" \
  || fail "the proposal does not select exactly the two runners: $(grep thread_name "$WORK/out")"
grep -qxF 'process = "^tickload$"' "$WORK/out" || fail "the proposal does not name the process"
# two loops that each work every tick are a pool: a tick per thread (the default)
! grep -q '^tick = ' "$WORK/out" || fail "the proposal makes tickload's two runners one tick per process"
sed -n '/^\[\[group\]\]/,/^period_ms/p' "$WORK/out" >"$WORK/p.toml"
"$SCX" check-config "$WORK/p.toml" >"$WORK/check" 2>&1 || fail "the proposal is not a valid configuration: $(cat "$WORK/check")"
wait $pid
# a process whose threads do nothing: no proposal, and why
sleep 30 &
set +e
"$SCX" suggest --pid $! --seconds 1 >"$WORK/idle" 2>&1; rc=$?
set -e
kill $! 2>/dev/null || true
((rc == 1)) && grep -q "is the server running its ticks" "$WORK/idle" || fail "an idle process: exit $rc, $(cat "$WORK/idle")"
"$SCX" suggest --pid 999999 --seconds 1 >"$WORK/gone" 2>&1 && fail "a missing process was not refused"
grep -q "process 999999 does not exist" "$WORK/gone" || fail "unclear error: $(cat "$WORK/gone")"
