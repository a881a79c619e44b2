#!/usr/bin/env bash
# PROBE (2026-11-30): where a minetest server's step waits, per thread,
# under SCHED_FIFO and under scx_tick (issue 26: scx_tick's late steps and
# the hogs' share are behind SCHED_FIFO's on the real servers). NSERVERS
# servers (4, the real bench's cell) x 12 ms of work per 50 ms step beside
# 8 hogs, SCHED_FIFO and scx_tick (tick=process, as the bench) in turns,
# ROUNDS rounds in one guest. Per cell, over WIN s: the servers' late steps
# (their own log), and per thread name summed over the servers: CPU,
# run-queue wait (schedstat), switches, voluntary switches, migrations;
# the hogs' CPU; since 2026-12-01 also every CPU's idle time (IDLE) and
# scx_tick's process (SCHEDULER). With TRACE=1, every switch away from a server thread
# that was still runnable (a preemption, from tracefs sched_switch): what
# took the CPU. With DECISIONS=1, scx_tick writes its decision trace and
# the cell prints tracereplay's counts (turns yielded among them);
# NOFIFO=1 leaves out the SCHED_FIFO cell. WORK_MS (12) is the load's
# work per step (a lighter one keeps a slow guest under capacity); IDLE=1
# adds a cell of the servers alone under EEVDF before the hogs start.
#   scripts/vm.sh --cpus 4 --timeout 1500 [--env PROBE_BINS=...] -- bash records/probes/server-waits-2026-11-30/probe.sh
source /work/main/tests/lib.sh
source "$ROOT/tests/servers/minetest.sh"
trap 'mt_stop_all; cleanup' EXIT
ROUNDS=${ROUNDS:-3} WIN=${WIN:-15} NSERVERS=${NSERVERS:-4} WORK_MS=${WORK_MS:-12}
for i in $(seq "$NSERVERS"); do mt_start s$i "$WORK_MS" 50; done
for i in $(seq "$NSERVERS"); do mt_wait_steps s$i 40 240 || fail "server s$i logged no steps"; done
TR=/sys/kernel/tracing; [[ -d $TR/events ]] || mount -t tracefs tracefs $TR
echo 8192 >$TR/buffer_size_kb
snap() { # tid name cpu_ns wait_ns runs migr vol inv, servers' threads then hogs
  local p t
  for p in "${MT_PIDS[@]}"; do for t in /proc/$p/task/*; do
    echo "S ${t##*/} $(tr ' ' _ <"$t/comm") $(cut -d' ' -f1-3 "$t/schedstat") $(awk '/se.nr_migrations/ {m=$3} /nr_voluntary_switches/ {v=$3} /nr_involuntary_switches/ {i=$3} END {print m, v, i}' "$t/sched")"
  done; done
  for p in $HOGS; do echo "H $p hog $(cut -d' ' -f1-3 /proc/$p/schedstat 2>/dev/null || echo 0 0 0) 0 0 0"; done
  # every CPU's idle time (2026-12-01), and scx_tick's process while it runs
  echo "I 0 IDLE $(awk '/^cpu / {printf "%.0f", ($5 + $6) * 10000000}' /proc/stat) 0 0 0 0 0"
  if [[ -n ${SCX_PID:-} ]]; then for t in /proc/$SCX_PID/task/*; do
    echo "P ${t##*/} SCHEDULER $(cut -d' ' -f1-3 "$t/schedstat" 2>/dev/null || echo 0 0 0) 0 0 0"; done; fi
}
cell() { # LABEL
  local a b t0 t1 m0 m1
  m0=$(mt_mark); a=$(snap); t0=$(date +%s%N)
  if [[ ${TRACE:-0} == 1 ]]; then
    echo 0 >$TR/tracing_on; echo >$TR/trace
    echo 'prev_state == 0' >$TR/events/sched/sched_switch/filter
    echo 1 >$TR/events/sched/sched_switch/enable; echo 1 >$TR/tracing_on
  fi
  sleep "$WIN"
  if [[ ${TRACE:-0} == 1 ]]; then
    echo 0 >$TR/tracing_on
    echo "# $1: preempted (prev -> next comm, per s of $WIN):"
    grep -o 'prev_comm=[^ ]* prev_pid=[0-9]* prev_prio=[0-9]* prev_state=[^ ]* ==> next_comm=[^ ]*' $TR/trace |
      awk -v w="$WIN" -v l="$1" '{split($1,a,"="); split($6,b,"="); if (a[2] !~ /^(stress-ng|kworker|ksoftirq|rcu|migration)/) n[a[2] " -> " b[2]]++} END {for (k in n) printf "# %s:   %-40s %6.1f\n", l, k, n[k] / w}' | sort -k2,2 -k5nr
  fi
  b=$(snap); t1=$(date +%s%N); m1=$(mt_mark)
  echo "$a" >"$WORK/a"; echo "$b" >"$WORK/b"
  echo "# $1: steps late secs work_ms: $(mt_late "$m0" "$m1" 50)"
  python3 - "$WORK/a" "$WORK/b" "$t0" "$t1" "$1" <<'PY'
import sys, collections
def rd(p):
    d = {}
    for l in open(p):
        f = l.split()
        if len(f) == 9: d[(f[0], f[1])] = f
    return d
a, b = rd(sys.argv[1]), rd(sys.argv[2])
wall = (int(sys.argv[4]) - int(sys.argv[3])) / 1e9
agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0, 0, 0, 0])
for k, x in b.items():
    y = a.get(k)
    if not y: continue
    name = x[2] if x[0] in 'SIP' else 'HOGS'
    g = agg[name]
    g[0] += 1
    g[1] += (int(x[3]) - int(y[3])) / 1e9 / wall
    g[2] += (int(x[4]) - int(y[4])) / 1e9 / wall
    for i, j in ((3, 5), (4, 6), (5, 7), (6, 8)):
        g[i] += (int(x[j]) - int(y[j])) / wall
print(f"# {sys.argv[5]}: window {wall:.1f} s")
print(f"# {sys.argv[5]}: {'thread':16s} {'n':>3s} {'CPUs':>6s} {'waitCPUs':>8s} {'runs/s':>7s} {'migr/s':>7s} {'vol/s':>7s} {'inv/s':>7s} {'wait/run ms':>11s}")
for name, g in sorted(agg.items(), key=lambda kv: -kv[1][1]):
    if g[1] < 0.005 and g[3] < 1 and name != "IDLE": continue
    wr = g[2] / g[3] * 1000 if g[3] else 0
    print(f"# {sys.argv[5]}: {name:16s} {g[0]:3d} {g[1]:6.3f} {g[2]:8.3f} {g[3]:7.0f} {g[4]:7.1f} {g[5]:7.0f} {g[6]:7.0f} {wr:11.2f}")
PY
}
HOGS=""
if [[ ${IDLE:-0} == 1 ]]; then cell "idle machine"; fi
stress-ng --cpu 8 --timeout 3000s >/dev/null 2>&1 &
sleep 2
HOGS=$(pgrep -f 'stress-ng-cpu' | tr '\n' ' ')
for r in $(seq "$ROUNDS"); do
  [[ ${NOFIFO:-0} == 1 ]] || { mt_fifo 50; sleep 2; cell "round $r fifo"; mt_fifo 0; }
  for bin in ${PROBE_BINS:-$SCX}; do
    SCX=$bin
    dec=(); [[ ${DECISIONS:-0} == 1 ]] && dec=(--trace-decisions "$WORK/dec.bin")
    start_scx --tick-threads "mt,process=^minetestserver\$,tick=process" "${dec[@]}"
    sleep 3
    cell "round $r scx_tick($(basename "$bin"))"
    stop_scx INT
    [[ ${DECISIONS:-0} == 1 ]] && echo "# round $r scx_tick($(basename "$bin")): $("$TRACEREPLAY" "$WORK/dec.bin" | head -1)"
  done
done
stop_hogs
