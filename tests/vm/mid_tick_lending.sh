#!/usr/bin/env bash
# While runners sleep, tick CPUs run other work (mid-tick tasks) unless
# --no-mid-tick; either way the hogs outside the group keep running.
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 2 --period-ms 50 --work-ms 2 --duration-s 8 --cgroup "$CG")

run_case() { # name, scx flags...
  local name=$1; shift
  start_scx --tick-cpus 1,2 --tick-cgroup tick "$@"
  stress-ng --cpu 6 --timeout 8s --metrics-brief >"$WORK/$name.stress" 2>&1 &
  local hogs=$!
  "$TICKLOAD" "${LOAD[@]}" >"$WORK/$name.load" || fail "$name: tickload failed"
  wait $hogs || fail "$name: stress-ng failed"
  stop_scx INT
  read_totals
  ops=$(awk '/metrc:.* cpu /{print $5}' "$WORK/$name.stress")
  note "$name: lends=$tot_lends other=$tot_dispatch_other hog bogo-ops=$ops; $(grep total: "$WORK/$name.load")"
  [[ -n "$ops" && "${ops%.*}" -gt 0 ]] || fail "$name: the hogs made no progress"
}

run_case mid-tick
((tot_lends > 0)) || fail "mid-tick on: tick CPUs never ran other work while runners slept"
run_case no-mid-tick --no-mid-tick
((tot_lends == 0)) || fail "--no-mid-tick: tick CPUs were lent $tot_lends times"
check_dmesg_clean
