#!/usr/bin/env bash
# PROBE (issues 26 and 27, 2026-12-01): where the machine's CPU goes inside
# the scheduler, SCHED_FIFO against scx_tick: the capacity cell at RUNNERS
# (8) runners x 12 ms per 50 ms beside 8 CPU hogs (4 vCPUs), perf sampling
# every CPU (cpu-clock, call graphs) for 8 s of each cell, in turns, ROUNDS
# (2) rounds. Per cell: the hogs' bogo-ops, the runners' misses, each
# tick_* BPF program's run time and count, and perf's top symbols (self)
# and the callers of the spin-lock slow path. VARIANTS: NAME=PATH ...
#   scripts/vm.sh --cpus 4 --timeout 1500 -- bash records/probes/dispatch-cost-2026-12-01/perf.sh
source /work/main/tests/lib.sh
OUT=/tmp/dispatchcost; mkdir -p "$OUT"
CG=$(make_cgroup tick)
ARGS=(-n "${RUNNERS:-8}" --period-ms 50 --work-ms 12 --seed 1 --duration-s 10 --cgroup "$CG" --json)
sysctl -qw kernel.bpf_stats_enabled=1 net.core.bpf_jit_kallsyms=1 kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0 || true
cell() { # name, tickload args
  local name=$1; shift
  stress-ng --cpu 8 --timeout 300s --metrics-brief --temp-path /tmp >"$OUT/$name.stress" 2>&1 &
  local hog=$!
  sleep 0.5
  bpftool -j prog show >"$OUT/$name.before.json"
  "$TICKLOAD" "${ARGS[@]}" "$@" >"$OUT/$name.json" &
  local tl=$!
  sleep 1
  perf record -q -a -g -F 499 -o "$OUT/$name.perf" -- sleep 8 >"$OUT/$name.prec" 2>&1 || { echo "perf record failed $name:"; tail -5 "$OUT/$name.prec"; } >&2
  wait $tl || echo "tickload failed $name" >&2
  bpftool -j prog show >"$OUT/$name.after.json"
  kill -INT $hog 2>/dev/null || true; wait $hog 2>/dev/null || true
  {
    echo "=== $name: hogs $(awk '$2 == "metrc:" && $4 == "cpu" {print $9}' "$OUT/$name.stress") bogo-ops/s"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('runners: ticks', d['ticks'], 'misses', d['misses'], 'start lateness quantiles ms', d['lateness_quantiles_ms'])" "$OUT/$name.json" 2>/dev/null || head -c 300 "$OUT/$name.json"
    echo "--- self, over 0.7 %"
    perf report -i "$OUT/$name.perf" --stdio --header-only >/dev/null 2>"$OUT/$name.perr" || { echo "perf report failed:"; tail -5 "$OUT/$name.perr"; }
    perf report -i "$OUT/$name.perf" --no-children --stdio --percent-limit 0.7 -g none --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 || true
    echo "--- children (callers' totals), over 2 %"
    perf report -i "$OUT/$name.perf" --children --stdio --percent-limit 2 -g none --sort sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 || true
    echo "--- who takes the spin-lock slow path"
    perf report -i "$OUT/$name.perf" --no-children --stdio -S native_queued_spin_lock_slowpath -G --percent-limit 0.3 2>/dev/null | grep -v '^#' | grep -v '^$' | head -60 || true
  } >"$OUT/$name.report" 2>&1
  cat "$OUT/$name.report"
  echo "cell $name done" >&2
}
read -ra VARS <<<"${VARIANTS:-main=/work/main/target/release/scx_tick}"
for r in $(seq "${ROUNDS:-2}"); do
  cell fifo-$r --policy fifo --fifo-prio 50
  for v in "${VARS[@]}"; do
    SCX=${v#*=} start_scx --tick-cgroup tick
    cell "${v%%=*}-$r"
    stop_scx INT
  done
done
python3 - "$OUT" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
for b in sorted(glob.glob(f"{out}/*.before.json")):
    name = os.path.basename(b)[:-len(".before.json")]
    bef = {p["id"]: p for p in json.load(open(b))}
    aft = json.load(open(f"{out}/{name}.after.json"))
    rows = []
    for p in aft:
        if not p.get("name", "").startswith("tick_"): continue
        q = bef.get(p["id"], {})
        ns = p.get("run_time_ns", 0) - q.get("run_time_ns", 0)
        n = p.get("run_cnt", 0) - q.get("run_cnt", 0)
        if n: rows.append((ns, p["name"], n))
    tot = sum(r[0] for r in rows)
    print(f"=== {name}: BPF {tot/1e9:.2f} CPU-s in the cell; " + ", ".join(f"{nm} {n} x {ns/n/1000:.0f} us" for ns, nm, n in sorted(rows, reverse=True)[:6]))
PY
echo done
