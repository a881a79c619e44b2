#!/usr/bin/env bash
# On a kernel without sched_ext, scx_tick exits non-zero and says so.
source "$(dirname "$0")/../lib.sh"
[[ -e /sys/kernel/sched_ext ]] && skip_platform "this host kernel has sched_ext"
set +e
"$SCX" >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
[[ $rc -ne 0 ]] || fail "exit status 0 on a kernel without sched_ext"
grep -q "no sched_ext support" "$WORK/err" || fail "unclear message: $(cat "$WORK/err")"
note "exit $rc: $(cat "$WORK/err")"
