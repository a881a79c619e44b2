#!/usr/bin/env bash
# PROBE (2026-11-30): which of scx_tick's threads take its 0.15 CPUs beside
# four minetest servers and 8 hogs (the real bench's cell): every thread's
# schedstat run time over 10 s, twice, and its name. With PROBE_BINS (a
# space-separated list of scx_tick binaries) each in turn (out2.txt: the
# committed build, then one with both scans every 2 s instead of 200 ms,
# /tmp/scx_tick_scan2s, two constants changed in membership.rs and
# pinning.rs and not committed).
#   scripts/vm.sh --cpus 4 --timeout 900 [--env PROBE_BINS=...] -- bash records/probes/sched-threads-2026-11-30/probe.sh
source /work/main/tests/lib.sh
source "$ROOT/tests/servers/minetest.sh"
trap 'mt_stop_all; cleanup' EXIT
for i in 1 2 3 4; do mt_start s$i 12 50; done
for i in 1 2 3 4; do mt_wait_steps s$i 40 240 || fail "server s$i logged no steps"; done
stress-ng --cpu 8 --timeout 300s >/dev/null 2>&1 &
for bin in ${PROBE_BINS:-$SCX}; do
SCX=$bin
echo "# binary: $bin"
start_scx --tick-threads "mt,process=^minetestserver\$,tick=process" --stats-json "$WORK/stats.jsonl"
sleep 5
snap() { for t in /proc/"$SCX_PID"/task/*; do echo "${t##*/} $(cat "$t/comm" | tr ' ' _) $(cut -d' ' -f1,3 "$t/schedstat")"; done; }
for r in 1 2; do
  a=$(snap); t0=$(date +%s%N); sleep 10; b=$(snap); t1=$(date +%s%N)
  echo "$a" >"$WORK/a"; echo "$b" >"$WORK/b"
  python3 - "$WORK/a" "$WORK/b" "$t0" "$t1" "$r" <<'PY'
import sys
a = {l.split()[0]: l.split() for l in open(sys.argv[1]) if l.strip()}
b = {l.split()[0]: l.split() for l in open(sys.argv[2]) if l.strip()}
wall = (int(sys.argv[4]) - int(sys.argv[3])) / 1e9
tot = 0
rows = []
for tid, x in b.items():
    y = a.get(tid, [tid, x[1], "0", "0"])
    cpu = (int(x[2]) - int(y[2])) / 1e9 / wall
    runs = (int(x[3]) - int(y[3])) / wall
    tot += cpu
    rows.append((cpu, tid, x[1], runs))
for cpu, tid, name, runs in sorted(rows, reverse=True):
    print(f"# round {sys.argv[5]}: thread {tid} {name}: {cpu:.3f} CPUs, {runs:.0f} runs/s")
print(f"# round {sys.argv[5]}: scx_tick's process {tot:.3f} CPUs over {wall:.1f} s")
PY
done
stop_scx INT
done
stop_hogs
