#!/usr/bin/env bash
# Two servers on one host, each its own tick group, beside 4 CPU hogs: a
# well-behaved one (4 runners x 20 ms per 50 ms tick) and an overloaded
# one (3 runners that never sleep, 70 ms of work per 50 ms tick: a lag
# machine). Work that runs on past a missed deadline ranks a period
# behind on-time ticks (nodemote), takes no CPU from other work, and gives
# its CPU to an on-time runner that would wait at home (overrunkeeps), so
# the well-behaved server keeps its ticks beside the overloaded one as if
# it were alone (checked from its own tickload, issue 27's target: at most
# 1 point more missed), while the overloaded one still gets what is left
# (it keeps ticking, at least a CPU's worth). Two rounds, alone then
# beside, their ticks summed: one round of the emulated guest now and then
# stalls a runner for tens of milliseconds whatever the policy.
# The well-behaved runners work 20 ms (12 ms until 2026-11-28): an
# on-time runner that takes the CPU of overrun work then keeps it only if
# the overrun work ranks behind it; ranked level (nodemote) they take
# turns a quantum each, which 12 ms of work survived within its deadline
# (the scenario missed nodemote on 24cb8dd) and 20 ms does not.
# Measured: see docs/testing.md's table (nodemote, overrunkeeps) and
# docs/reliability-figures.md (the normal build).
# Catches: nodemote overrunkeeps
source "$(dirname "$0")/../lib.sh"
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=8
ROUNDS=2
good=(-n 4 --work-ms 20 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD" --seed 1)
start_scx --tick-cgroup good --tick-cgroup bad
for ((r = 1; r <= ROUNDS; r++)); do
  stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
  hogs=$!
  "$TICKLOAD" "${good[@]}" >"$WORK/alone-$r.json" || fail "tickload failed"
  wait $hogs
  stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
  hogs=$!
  "$TICKLOAD" -n 3 --work-ms 70 --game-server --period-ms 50 --duration-s $SECS --json \
    --cgroup "$BAD" >"$WORK/bad-$r.json" &
  bad=$!
  "$TICKLOAD" "${good[@]}" >"$WORK/beside-$r.json" || fail "tickload failed"
  wait $bad || fail "the overloaded server's tickload failed"
  wait $hogs
  [[ "$(sched_state)" == enabled ]] || fail "scx_tick was ejected: $(tail -3 "$WORK/scx.err")"
done
stop_scx INT
[[ $SCX_RC -eq 0 ]] || fail "exit status $SCX_RC"
python3 - "$WORK" $SECS $ROUNDS <<'PY' || fail_catches "nodemote overrunkeeps" "the overloaded server cost its neighbour its ticks: see above"
import json, sys
w, secs, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
runs = {n: [json.load(open(f"{w}/{n}-{r}.json")) for r in range(1, rounds + 1)]
        for n in ("alone", "beside", "bad")}
pct = lambda rs: 100 * sum(r["misses"] for r in rs) / max(1, sum(r["ticks"] for r in rs))
p50 = lambda rs: " / ".join(f"{r['lateness_quantiles_ms'][50]:.1f}" for r in rs)
alone, beside = pct(runs["alone"]), pct(runs["beside"])
print(f"# well-behaved server: alone {alone:.2f} % missed (p50 start lateness {p50(runs['alone'])} ms), "
      f"beside the overloaded one {beside:.2f} % ({p50(runs['beside'])} ms); per round beside: "
      + " / ".join(f"{r['miss_pct']:.2f}" for r in runs["beside"]))
cpu = min(r["ticks"] for r in runs["bad"]) * 70 / 1000 / secs
print(f"# overloaded server: at least {cpu:.2f} CPUs (ticks of 70 ms)")
ok = beside <= alone + 1.0
# what is left after the neighbour (~1.6 CPUs) and the hogs' share: it
# keeps at least a CPU (measured 2.3-2.8 beside a 1-CPU neighbour)
ok &= cpu >= 1.0
sys.exit(0 if ok else 1)
PY
check_dmesg_clean
