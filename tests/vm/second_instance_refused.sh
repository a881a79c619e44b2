#!/usr/bin/env bash
# A second scx_tick started while one runs exits non-zero and says why; the
# first keeps running.
# guest: shared
source "$(dirname "$0")/../lib.sh"
start_scx
set +e
"$SCX" >"$WORK/second.out" 2>"$WORK/second.err"
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "second instance exited 0"
grep -q "already running" "$WORK/second.err" || fail "no clear message: $(cat "$WORK/second.err")"
note "second instance: exit $rc: $(tail -1 "$WORK/second.err")"
[[ "$(sched_state)" == enabled ]] || fail "first instance lost (state $(sched_state))"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "first instance exit status $SCX_RC"
