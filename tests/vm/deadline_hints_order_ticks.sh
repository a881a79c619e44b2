#!/usr/bin/env bash
# Deadline hints make EDF exact: a runner with a tight real deadline that
# wakes just after a long runner misses under implicit deadlines (wake +
# group deadline: it waits for the long runner's turn to end, a quantum
# and the next kernel tick) and is served first with hints (the C client
# example); stale and absurd hints are ignored; a process outside the tick
# group, or not owning it, cannot register.
# Catches: fifo nohints noauth nohintfilter
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup hint)
RUNNER="$WORK/hint_runner"
cc -O2 -Wall -I"$ROOT/hint/include" "$ROOT/examples/hint_runner.c" \
  -L"$ROOT/target/release" -lscx_tick_hint -Wl,-rpath,"$ROOT/target/release" -o "$RUNNER" \
  || fail "the C client example does not build"
chmod 755 "$WORK"

# one tick CPU, and the runners may use only it: they share CPU 1 and only
# the EDF order differs (no other CPU can take the one that waits)
start_scx --tick-cpus 1 --tick-cgroup hint,period=50
in_group() { sh -c 'echo $$ >"$0/cgroup.procs" && exec taskset -c 1 "$@"' "$CG" "$@"; }
# long: wakes on the 50 ms grid, 15 ms of work, due 45 ms later;
# tight: wakes 1 ms later, 1 ms of work, due 3 ms after its wake: served at
# once only by its hint (implicit: it waits for the long runner's 3 ms
# quantum, ended by a kernel tick; 120 of 120 missed, hinted 6-17, in probes)
pair() { # out-suffix, extra flags...
  local sfx=$1; shift
  in_group "$RUNNER" --phase-ms 0 --work-ms 15 --deadline-ms 45 --duration-s 6 "$@" >"$WORK/long.$sfx" &
  local long=$!
  in_group "$RUNNER" --phase-ms 1 --work-ms 1 --deadline-ms 3 --duration-s 6 "$@" >"$WORK/tight.$sfx" \
    || fail "tight runner ($sfx) failed: $(cat "$WORK/tight.$sfx")"
  wait $long || fail "long runner ($sfx) failed"
}
misses() { sed -E 's/.*misses=([0-9]+).*/\1/' "$1"; }

pair implicit
pair hinted --hint
implicit=$(misses "$WORK/tight.implicit") hinted=$(misses "$WORK/tight.hinted")
note "tight runner: implicit deadlines $(cat "$WORK/tight.implicit"); hinted $(cat "$WORK/tight.hinted")"
note "long runner: implicit $(cat "$WORK/long.implicit"); hinted $(cat "$WORK/long.hinted")"
# the case is what it claims: without hints the tight runner misses
((implicit >= 60)) || fail "without hints the tight runner missed only $implicit of 120: the case does not test hints"
((hinted * 3 <= implicit)) || fail_catches "fifo nohints" "hints did not help the tight runner: $hinted misses vs $implicit without (allowed: a third)"

# tickload's runner threads register too (the Rust client)
"$TICKLOAD" -n 3 --work-ms 1 --duration-s 2 --cgroup "$CG" --hint >"$WORK/tickload" \
  || fail "tickload --hint failed: $(cat "$WORK/tickload")"

# wrong hints are ignored, not obeyed: both runners still tick
in_group "$RUNNER" --work-ms 1 --deadline-ms 20 --duration-s 2 --bad-hint stale >"$WORK/stale" || fail "stale-hint runner failed"
in_group "$RUNNER" --work-ms 1 --deadline-ms 20 --duration-s 2 --bad-hint absurd >"$WORK/absurd" || fail "absurd-hint runner failed"

# outside the group: refused
set +e
"$RUNNER" --hint --duration-s 1 2>"$WORK/outside.err"; rc=$?
# in the group, but not root and not the cgroup's owner: refused
in_group setpriv --reuid=65534 --regid=65534 --clear-groups "$RUNNER" --hint --duration-s 1 2>"$WORK/nobody.err"; rc2=$?
set -e
note "outside the group: $(cat "$WORK/outside.err")"
note "not the owner: $(cat "$WORK/nobody.err")"
((rc != 0)) || fail "a process outside the tick group registered"
((rc2 != 0)) || fail_catches noauth "a process not owning the tick group registered"
grep -q "cannot register.*not in a tick group" "$WORK/outside.err" || fail "no clear refusal: $(cat "$WORK/outside.err")"
grep -q "may not write deadline hints" "$WORK/nobody.err" || fail "no clear refusal: $(cat "$WORK/nobody.err")"

stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
grep "scx_tick summary: hint:" "$WORK/scx.out" | sed 's/^/# /'
used=$(group_stat hint hints_used)
ignored=$(group_stat hint hints_ignored)
((used > 0)) || fail "no tick used a hint"
((ignored >= 40)) || fail_catches nohintfilter "only $ignored wrong hints ignored (2 runners x 2 s x 20 TPS sent them)"
check_dmesg_clean
