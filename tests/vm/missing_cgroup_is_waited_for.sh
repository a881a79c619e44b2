#!/usr/bin/env bash
# A tick group whose cgroup does not exist at start is waited for (as at
# boot): scx_tick starts, says so, and schedules its threads as runners once
# the cgroup appears, and again after it was removed and made anew (a
# restarted service's cgroup gets a new id). "create" makes it at start.
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=/sys/fs/cgroup/later.service
start_scx --tick-cgroup later.service --stats-json "$WORK/s.json"
for _ in $(seq 50); do grep -q "waiting for it" "$WORK/scx.err" && break; sleep 0.1; done
grep -q "cgroup $CG does not exist (yet); waiting for it" "$WORK/scx.err" || fail "no waiting message: $(cat "$WORK/scx.err")"
ticks() { # cumulative, from the latest JSON line (1 s apart)
  sleep 1.2
  tail -1 "$WORK/s.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["groups"]["later.service"]["ticks"])'
}
mkdir $CG
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 3 --cgroup $CG >/dev/null
grep -q "tick group later.service: cgroup $CG exists now" "$WORK/scx.err" || fail "the cgroup's appearance was not logged"
first=$(ticks)
note "cgroup made after start: $first ticks"
((first >= 60)) || fail "only $first ticks counted in the cgroup made after start (2 runners x 20 TPS x 3 s)"
# removed and made anew, as a service restart does
echo $$ >/sys/fs/cgroup/cgroup.procs
rmdir $CG
sleep 0.5
mkdir $CG
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 3 --cgroup $CG >/dev/null
second=$(ticks)
note "cgroup made anew: $((second - first)) more ticks"
((second - first >= 60)) || fail "only $((second - first)) ticks counted in the cgroup made anew"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
rmdir $CG

# create: scx_tick makes the cgroup at start
start_scx --tick-cgroup made/by/scx_tick --missing-cgroup create
for _ in $(seq 50); do [[ -d /sys/fs/cgroup/made/by/scx_tick ]] && break; sleep 0.1; done
[[ -d /sys/fs/cgroup/made/by/scx_tick ]] || fail "--missing-cgroup create made no cgroup"
grep -q "created cgroup /sys/fs/cgroup/made/by/scx_tick" "$WORK/scx.err" || fail "the creation was not logged"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
check_dmesg_clean
