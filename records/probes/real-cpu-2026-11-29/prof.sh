#!/usr/bin/env bash
# PROBE (issue 26, 2026-11-29): where scx_tick's own process spends its CPU
# beside four minetest servers (the bench's real family, selected by process
# name, tick=process) and 8 CPU hogs: each of its threads' utime+stime over
# 10 s, then perf's samples of the process over 10 s (cpu-clock, call
# graphs), and strace -c -f of it over 10 s. PROF_BIN (2026-11-30, optional):
# another scx_tick binary than target/release/scx_tick.
set -euo pipefail
ROOT=/work/main
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"
WORK=$(mktemp -d /tmp/prof.XXXXXX); cd "$WORK"
source "$ROOT/tests/servers/minetest.sh"
trap 'stop_sched; pkill -f stress-ng 2>/dev/null || true; mt_stop_all' EXIT
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || die "no steps"; done
echo "threads per server: $(for p in "${MT_PIDS[@]}"; do ls /proc/$p/task | wc -l; done | tr '\n' ' ')" >&2
echo "processes: $(ls -d /proc/[0-9]* | wc -l)" >&2
stress-ng --cpu 8 --timeout 0 >/dev/null 2>&1 &
SPEC="mt,process=^minetestserver\$,tick=process"
nice -n -20 "${PROF_BIN:-$ROOT/target/release/scx_tick}" --tick-threads "$SPEC" --stats-json "$WORK/scx.jsonl" >"$WORK/sched.log" 2>&1 &
SCHED_PID=$!
wait_sched_state enabled 120 "$SCHED_PID" || die "scx_tick did not load"
threads_nice_0 "$SCHED_PID"
sleep 3
threads() { for t in /proc/$SCHED_PID/task/*; do echo "$(cat $t/comm) $(cut -d' ' -f14,15 $t/stat)"; done; }
threads >"$WORK/t0"; sleep 10; threads >"$WORK/t1"
echo "=== per thread (name utime stime, jiffies, before / after 10 s)" >&2; paste "$WORK/t0" "$WORK/t1" >&2
perf record -q -F 250 -g -p "$SCHED_PID" -o "$WORK/perf.data" -- sleep 10 >/dev/null 2>&1 || echo "perf record failed" >&2
echo "=== perf report" >&2
perf report -i "$WORK/perf.data" --no-children --stdio --percent-limit 1.5 -g none 2>/dev/null | grep -v '^$' | head -60 >&2 || true
echo "=== perf report by syscall-ish callers (children)" >&2
perf report -i "$WORK/perf.data" --children --stdio --percent-limit 3 -g none 2>/dev/null | grep -v '^$' | head -60 >&2 || true
echo "=== strace -c" >&2
timeout 12 strace -c -f -p "$SCHED_PID" -o "$WORK/strace.txt" -- sleep 10 2>/dev/null || true
sleep 1; cat "$WORK/strace.txt" >&2 || true
