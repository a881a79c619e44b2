#!/usr/bin/env bash
# PROBE (2026-12-01): which task events the guest of the real bench's
# minetest cell sees (4 servers x WORK_MS (5) ms per 50 ms step, 8 hogs,
# scx_tick selecting the servers by process name), per second, by event
# and task name: the events the prototype in prototype-events.diff
# scanned after. tracefs, WIN (10) s.
#   scripts/vm.sh --cpus 4 --timeout 900 -- bash records/probes/scan-events-2026-12-01/events.sh
source /work/main/tests/lib.sh
source "$ROOT/tests/servers/minetest.sh"
trap 'mt_stop_all; cleanup' EXIT
WIN=${WIN:-10}
for i in 1 2 3 4; do mt_start s$i "${WORK_MS:-5}" 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || fail "server s$i logged no steps"; done
stress-ng --cpu 8 --timeout 3000s >/dev/null 2>&1 &
start_scx --tick-threads "mt,process=^minetestserver\$,tick=process"
sleep 3
TR=/sys/kernel/tracing; [[ -d $TR/events ]] || mount -t tracefs tracefs $TR
echo 8192 >$TR/buffer_size_kb; echo 0 >$TR/tracing_on; echo >$TR/trace
for e in sched/sched_process_fork sched/sched_process_exit sched/sched_process_exec task/task_rename \
  cgroup/cgroup_attach_task cgroup/cgroup_mkdir cgroup/cgroup_rmdir; do echo 1 >$TR/events/$e/enable; done
echo 1 >$TR/tracing_on; sleep "$WIN"; echo 0 >$TR/tracing_on
echo "# events per second over $WIN s, by event and the task that fired it (its comm):"
grep -v '^#' $TR/trace | awk -v w="$WIN" '{ for (i = 1; i <= NF; i++) if ($i ~ /^(sched_process_|task_rename|cgroup_)/) { ev = $i; break }
  split($1, a, "-"); n[ev " " a[1]]++ } END { for (k in n) printf "%-40s %7.1f\n", k, n[k] / w }' | sort -k3nr
stop_scx INT
stop_hogs
