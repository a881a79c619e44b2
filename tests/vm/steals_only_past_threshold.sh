#!/usr/bin/env bash
# Two runners homed on tick CPU 1, allowed only CPU 1 for their first
# second and CPUs 1 and 2 after it, CPU 2 busy with other work: no idle
# CPU can take the runner that waits 10 ms behind the other, so the
# threshold decides. Predicted to start late (3 ms
# threshold) it is stolen: tick CPU 2's other work is preempted for it.
# Never with a threshold above the wait; never stolen with
# --no-work-stealing (one shared queue that every tick CPU serves).
# Modes: bpf, userspace (test.sh runs it again as userspace/NAME).
# Catches: nosteal steal-early nostealcount
# guest: shared
source "$(dirname "$0")/../lib.sh"
CG=$(make_cgroup tick)
LOAD=(-n 2 --period-ms 50 --work-ms 10 --duration-s 5 --cgroup "$CG" --json)

run_case() { # name, scx flags...
  local name=$1; shift
  start_scx --tick-cpus 1,2 --tick-cgroup "tick,cpus=1" "$@"
  taskset -c 2 stress-ng --cpu 1 --timeout 7s >/dev/null 2>&1 &
  local hog=$!
  # the hog holds CPU 2 before the first tick: an idle CPU 2 took the
  # waiting runner without a steal, and it stayed there (its home is
  # shared), so 0 steals were counted (2 runs of 2026-11-29, 1-3 before;
  # once more in a slower host's shared guest, where the hog's worker
  # existed but had not yet run: so wait until it has used CPU time)
  local w
  for _ in $(seq 100); do
    w=$(pgrep -P "$hog" | head -1) || true
    (($(cpu_ticks $w) > 0)) && break
    sleep 0.1
  done
  sleep 0.5
  # The runners start on CPU 1 alone and are allowed CPU 2 a second later,
  # once scx_tick has homed them on CPU 1 (it looks for new threads every
  # 200 ms; nothing checks that it did): a runner that got a CPU before
  # its home was known could start on CPU 2, and it stays where it slept
  # (its home is shared), so no steal was ever needed (0 counted in 5 of 6
  # runs on a faster-starting build, records/probes/load-time-2026-11-30/).
  taskset -c 1 "$TICKLOAD" "${LOAD[@]}" --ticks-log "$WORK/$name.ticks" >"$WORK/$name.load" &
  local load=$!
  sleep 1
  kill -0 $load 2>/dev/null || { wait $load || true; fail "$name: tickload ended within its first second"; }
  taskset -a -p -c 1,2 $load >/dev/null || fail "$name: could not allow the runners CPU 2"
  wait $load || fail "$name: tickload failed"
  wait $hog
  stop_scx INT
  [[ $SCX_RC -eq 0 ]] || fail "$name: exit status $SCX_RC"
  read_totals
  note "$name: ticks=$tot_ticks stolen=$tot_dispatch_stolen refused=$tot_steals_refused; $(grep -o '"cpus":{[^}]*}' "$WORK/$name.load" | tr '\n' ' ')"
  local ran; ran=$(json_field "$WORK/$name.load" ticks)
  # the workload keeps its ticks: 200 of 200 in every record but two
  # (userspace, 2026-11-24: 140, scx_tick counting 138-139)
  ((ran >= 190)) || fail "$name: the workload ran $ran of its 200 ticks (allowed: 190 or more)"
  # scx_tick counts the workload's ticks (measured: 202-207 of 200)
  ((ran > 0 && tot_ticks * 10 >= ran * 9 && tot_ticks * 10 <= ran * 11)) ||
    fail "$name: scx_tick counted $tot_ticks ticks where the workload ran $ran (allowed: within 10 %)"
}

run_case default
# soft pinning: homed on CPU 1, yet ticks really ran on CPU 2 too (the
# workload's side), and scx_tick counted those steals
python3 - "$WORK/default.load" <<'PY' || fail_catches nosteal "default threshold: no tick ran on CPU 2 although a runner waited 10 ms on CPU 1"
import json, sys
r = json.load(open(sys.argv[1]))
cpus = {c for x in r["runners"] for c in x["cpus"]}
print("# CPUs the soft-pinned runners ran on:", sorted(cpus))
sys.exit(0 if "2" in cpus else 1)
PY
((tot_dispatch_stolen > 0)) ||
  fail_catches "nosteal nostealcount" "default threshold: ticks ran on CPU 2, but scx_tick counted no steal"
# Ticks that really started more than MS late, from the workload's side
# (its log: runner, due, begin, end in ns).
late_ticks() { # name, ms
  awk -v ns=$(($2 * 1000000)) '$3 - $2 > ns { n++ } END { print n + 0 }' "$WORK/$1.ticks"
}
run_case high-threshold --steal-threshold-ms 40
# A runner waits ~10 ms, so no steal is due; yet the emulated guest now and
# then holds a runner for longer (CI once saw one steal in userspace mode,
# 1 of 198 ticks), and a steal of such a runner is right. So every steal
# must match a tick that started late from the workload's side: past 40 ms
# less the at most one queued 10 ms tick the prediction looks ahead (BPF
# mode), with 10 ms to spare: > 20 ms. (steal-early: see docs/testing.md.)
late=$(late_ticks high-threshold 20)
note "high-threshold: $tot_dispatch_stolen steals, $late ticks started more than 20 ms late"
((tot_dispatch_stolen <= late)) ||
  fail_catches steal-early "threshold 40 ms: $tot_dispatch_stolen steals but only $late ticks started more than 20 ms late"
run_case no-stealing --no-work-stealing
((tot_dispatch_stolen == 0)) || fail "--no-work-stealing: $tot_dispatch_stolen steals"
check_dmesg_clean
