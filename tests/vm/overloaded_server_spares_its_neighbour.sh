#!/usr/bin/env bash
# Two servers on one host, each its own tick group, beside 4 CPU hogs: a
# well-behaved one (4 runners x 12 ms per 50 ms tick) and an overloaded
# one (3 runners that never sleep, 70 ms of work per 50 ms tick: a lag
# machine). Overrun work gives its CPU to an on-time runner that would
# wait at home (overrunkeeps), ranks a period behind on-time ticks so
# that the runner then keeps that CPU to the end of its work (nodemote),
# and takes no CPU from other work, so the well-behaved server keeps its
# ticks beside the overloaded one nearly as if it were alone (checked
# from its own tickload: at most 3 points more missed, where EEVDF's
# neighbour missed 5.6-9.6 % beside against 0.00 alone; issue 27's target
# is 1 point, a timing claim for the benchmark's isolation cell: on the
# host of 2026-12-02 the normal build's neighbour missed 0.31-1.80 %
# beside, the build before it 0.16-1.33, in turns in one guest:
# records/probes/overloaded-ab-2026-12-02), and each
# tick takes about as long as alone (its mean MSPT, the wall time from a
# tick's start to its end: ranked level with on-time work, overrun work
# takes turns with the runner a quantum each), while the overloaded one
# still gets what is left (it keeps ticking, at least a CPU's worth). Two
# rounds, alone then beside, their ticks summed: one round of the
# emulated guest now and then stalls a runner for tens of milliseconds
# whatever the policy.
# Measured (2026-11-27, 4 vCPUs, 3 rounds each, one guest): beside it
# 0.00 / 0.00 / 0.16 % missed, alone 0.00; with the breakage overrunkeeps
# (the previous policy) 2.34 / 1.09 / 1.41 % (earlier runs 1.1-14.6 %).
# nodemote missed 44.97 % before overrunkeeps came; since, misses do not
# tell it apart (0.47-3.05 % beside in 4 runs with 12 ms runners, the
# normal build 0.00-0.62; with 20 ms runners the normal build itself
# missed 1.33 % beside against 0.23 alone, 2026-11-28), so the MSPT check
# catches it: the neighbour's mean MSPT beside over alone was 1.00-1.06
# in 7 runs of the normal build (2026-11-28) and 1.22-1.33 in 4 with
# nodemote (p99 about 1.8 x); the bound, 1.15, has a margin of about 0.1
# either way. Since a runner first in line at a free home goes straight
# to it (2026-11-29), overrunkeeps no longer shows in misses (0.00-0.16 %
# beside) but in MSPT: 1.18 and 1.23 x alone (the normal build 1.04 and
# 1.05): the runner that may not spill takes turns at home.
# Catches: nodemote overrunkeeps
# guest: shared
source "$(dirname "$0")/../lib.sh"
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=8
ROUNDS=2
good=(-n 4 --work-ms 12 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD" --seed 1)
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
# exit status 4, plus 1 for the neighbour's misses (or the overloaded
# server's CPUs), plus 2 for its MSPT
verdict=0
python3 - "$WORK" $SECS $ROUNDS <<'PY' || verdict=$?
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
ok = beside <= alone + 3.0
mspt = lambda rs: sum(r["total"]["mspt_mean_ms"] * r["ticks"] for r in rs) / max(1, sum(r["ticks"] for r in rs))
m_alone, m_beside = mspt(runs["alone"]), mspt(runs["beside"])
p99 = lambda rs: " / ".join(f"{r['total']['mspt_p99_ms']:.1f}" for r in rs)
print(f"# well-behaved server's mean MSPT: alone {m_alone:.1f} ms, beside {m_beside:.1f} ms; "
      f"p99 per round alone {p99(runs['alone'])}, beside {p99(runs['beside'])}")
open(f"{w}/mspt", "w").write(f"{m_alone:.1f} ms alone, {m_beside:.1f} beside ({m_beside / max(m_alone, 0.1):.2f} x)")
# overrun work that takes turns with on-time runners (nodemote) slows
# each tick by a few quanta: see the header for the measured ratios
slow = m_beside > 1.15 * m_alone
# what is left after the neighbour (~1 CPU) and the hogs' share: it keeps
# at least a CPU (measured 2.3-2.8)
ok &= cpu >= 1.0
sys.exit(4 | (0 if ok else 1) | (2 if slow else 0))
PY
# 4-7: the check ran (4 + the bits); anything else is the check itself failing
((verdict >= 4 && verdict <= 7)) || fail "the check itself failed (exit $verdict)"
(((verdict & 1) == 0)) || fail_catches "nodemote overrunkeeps" "the overloaded server cost its neighbour its ticks: see above"
# (overrunkeeps shows here too since a runner that would wait at home
# goes straight to a free home: one that may not spill onto overrun
# work's CPU takes turns at home with the runner there instead)
(((verdict & 2) == 0)) || fail_catches "nodemote overrunkeeps" "beside the overloaded server the neighbour's ticks took longer than alone (MSPT $(cat "$WORK/mspt")): overrun work took turns with on-time runners, or on-time runners with each other"
check_dmesg_clean
