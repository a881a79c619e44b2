#!/usr/bin/env bash
# On a kernel without sched_ext scx_tick exits non-zero and says so, before
# anything is loaded. In the guest (a sched_ext kernel) it runs in a mount
# namespace whose /sys/kernel is an empty tmpfs, so /sys/kernel/sched_ext
# is missing to it alone (tests/host/ has the same check on a host without
# sched_ext; it skips on a host that has it).
# guest: shared
source "$(dirname "$0")/../lib.sh"
set +e
unshare -m sh -c 'mount -t tmpfs none /sys/kernel && exec "$0"' "$SCX" >"$WORK/out" 2>"$WORK/err"
rc=$?
set -e
note "exit $rc: $(cat "$WORK/err")"
[[ $rc -ne 0 ]] || fail "exit status 0 without sched_ext"
grep -q "no sched_ext support" "$WORK/err" || fail "unclear message: $(cat "$WORK/err")"
(($(wc -l <"$WORK/err") == 1)) || fail "more than one line: $(cat "$WORK/err")"
[[ "$(sched_state)" == disabled ]] || fail "sched_ext is $(sched_state) after the refusal"
