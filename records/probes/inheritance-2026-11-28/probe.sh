#!/usr/bin/env bash
# Issue 26: which mechanism passes a step's deadline to the threads it
# waits on, and what it costs, measured on the real server. Four of
# Debian's minetest-server (12 ms of work per 50 ms step, the project's
# load mod) beside 8 CPU hogs, in one 4-vCPU guest, three selections in
# turn, ROUNDS rounds of SECS seconds each:
#   process  every thread by process name, one tick per process (the
#            step's deadline shared by the threads that work for it: the
#            inheritance scx_tick has)
#   thread   every thread by process name, a tick per thread (no
#            inheritance: each thread's wake-up is its own tick)
#   loop     only the thread that runs the step (the server's busiest
#            thread, by name, as `scx_tick suggest` proposes), a tick per
#            thread: the helpers are other work
# Per phase: the servers' own late steps, the hogs' CPUs, scx_tick's BPF
# time (struct_ops run_time_ns with kernel.bpf_stats_enabled) per second
# and per call, and scx_tick's ticks per step.
# Run: scripts/vm.sh --cpus 4 --timeout 1500 -- bash records/probes/inheritance-2026-11-28/probe.sh
source "$(dirname "$0")/../../../tests/lib.sh"
source "$ROOT/tests/servers/minetest.sh"
trap 'mt_stop_all; cleanup' EXIT
STEP_MS=50 SECS=${SECS:-10} ROUNDS=${ROUNDS:-3}
echo 1 >/proc/sys/kernel/bpf_stats_enabled

for i in 1 2 3 4; do mt_start s$i 12 $STEP_MS; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 180 || fail "server s$i logged no steps"; done
sleep 5
# the step's thread: the busiest of the first server's threads over 3 s
# of steps (the main thread's start-up, the map's generation, is not a step)
cpu_of() { local f; f=($(sed 's/.*) //' "$1/stat")); echo $((f[11] + f[12])); }
declare -A c0
for t in /proc/${MT_PIDS[0]}/task/*; do c0[$t]=$(cpu_of "$t"); done
sleep 3
note "threads of server s1 (CPU ticks in 3 s, name):"
for t in /proc/${MT_PIDS[0]}/task/*; do
  echo "#   $(($(cpu_of "$t") - ${c0[$t]:-0})) $(cat "$t/comm")"
done
loop=$(for t in /proc/${MT_PIDS[0]}/task/*; do
  echo "$(($(cpu_of "$t") - ${c0[$t]:-0})) $(cat "$t/comm")"
done | sort -rn | head -1 | cut -d' ' -f2-)
note "the step's thread: $loop"

bpf_ns() { # total run_time_ns and run_cnt of scx_tick's struct_ops programs
  bpftool -j prog show | python3 -c '
import json, sys
ns = cnt = 0
for p in json.load(sys.stdin):
    if p.get("type") == "struct_ops":
        ns += p.get("run_time_ns", 0); cnt += p.get("run_cnt", 0)
print(ns, cnt)'
}

stress-ng --cpu 8 --timeout 3000s >/dev/null 2>&1 &
sleep 1
for r in $(seq 1 "$ROUNDS"); do
  for sel in process thread loop; do
    case $sel in
      process) spec="mt,process=^minetestserver\$,tick=process" ;;
      thread) spec="mt,process=^minetestserver\$,tick=thread" ;;
      loop) spec="mt,process=^minetestserver\$,thread=^${loop}\$,tick=thread" ;;
    esac
    start_scx --tick-threads "$spec" --stats-json "$WORK/stats-$sel-$r.jsonl"
    sleep 1
    read -r ns0 c0 <<<"$(bpf_ns)"
    measure_window mt_mark
    read -r ns1 c1 <<<"$(bpf_ns)"
    set -- $(mt_late "$WIN_FROM" "$WIN_TO" $STEP_MS)
    stop_scx INT
    rates=$(group_rates "$WORK/stats-$sel-$r.jsonl" mt || echo "0 0")
    read -r tps mps <<<"$rates"
    sps=$(per_s "$1" "$3")
    echo "PROBE round=$r sel=$sel steps=$1 late=$2 late_pct=$(pct "$2" "$1") work_ms=$4" \
      "hogs_cpus=$(calc "$WIN_HOGS / 100 / ($WIN_NS / 1e9)" 2)" \
      "bpf_ms_per_s=$(calc "($ns1 - $ns0) / 1e6 / ($WIN_NS / 1e9)" 1)" \
      "bpf_ns_per_call=$(calc "($ns1 - $ns0) / (($c1 - $c0) > 0 ? ($c1 - $c0) : 1)" 0)" \
      "calls_per_s=$(calc "($c1 - $c0) / ($WIN_NS / 1e9)" 0)" \
      "ticks_per_step=$(calc "$tps / ($sps > 0 ? $sps : 1)" 2) misses_per_s=$mps"
  done
done
