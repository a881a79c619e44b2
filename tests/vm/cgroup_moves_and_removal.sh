#!/usr/bin/env bash
# Threads become tick runners when moved into the group at run time and stop
# being runners when moved out; a group removed while running causes no error.
# A missing cgroup at start is refused with a clear message when asked to
# (--missing-cgroup refuse).
source "$(dirname "$0")/../lib.sh"
set +e
"$SCX" --missing-cgroup refuse --tick-cgroup no/such/group >"$WORK/out" 2>"$WORK/err"; rc=$?
set -e
((rc != 0)) || fail "a missing tick cgroup was accepted"
grep -q "does not exist" "$WORK/err" || fail "unclear message: $(cat "$WORK/err")"
note "missing group: $(cat "$WORK/err")"

CG=$(make_cgroup tick)
OUT=$(make_cgroup outside)
start_scx --tick-cgroup tick --stats 1
# 1) outside the group: no ticks
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 3 --cgroup "$OUT" >/dev/null
sleep 1.5 # let one stats interval pass
before=$(tail -1 "$WORK/scx.out")
# 2) moved into the group while running: ticks counted
"$TICKLOAD" -n 2 --work-ms 2 --duration-s 3 --cgroup "$CG" >/dev/null
# 3) a child cgroup below the group counts too, then the group disappears
mkdir "$CG/child"
"$TICKLOAD" -n 1 --work-ms 2 --duration-s 2 --cgroup "$CG/child" >/dev/null
echo $$ >/sys/fs/cgroup/cgroup.procs
rmdir "$CG/child" "$CG"
"$TICKLOAD" -n 1 --work-ms 2 --duration-s 2 --cgroup "$OUT" >/dev/null
[[ "$(state)" == enabled ]] || fail "scheduler left after the group was removed"
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
read_totals
note "ticks while outside the group (per stats line): ${before}"
note "total ticks: $tot_ticks"
# 2 runners x 3 s x 20 TPS + 1 x 2 s x 20 = 160 ticks inside; outside ones must not count
((tot_ticks >= 120 && tot_ticks <= 240)) || fail "ticks=$tot_ticks, expected about 160-180 (only the runs inside the group; outside ones would add 120+)"
check_dmesg_clean
