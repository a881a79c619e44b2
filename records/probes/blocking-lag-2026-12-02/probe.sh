#!/usr/bin/env bash
# vm/overloaded_server_spares_its_neighbour's body with several builds in
# turns in one guest (PROBE_BINS: the scx_tick binaries, ROUNDS: turns),
# the overloaded server blocking BLOCKS times a tick for 1 ms (a lag
# machine that waits on a lock now and then): does a moment's block end
# its demotion, and does the neighbour see it?
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=8
good=(-n 4 --work-ms 12 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD" --seed 1)
for t in $(seq "${ROUNDS:-3}"); do
  for bin in $PROBE_BINS; do
    SCX=$bin
    start_scx --tick-cgroup good --tick-cgroup bad
    for r in 1 2; do
      stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
      hogs=$!
      "$TICKLOAD" "${good[@]}" >"$WORK/alone-$r.json"
      wait $hogs
      stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
      hogs=$!
      "$TICKLOAD" -n 3 --work-ms 70 --blocks "${BLOCKS:-4}" --game-server --period-ms 50 --duration-s $SECS --json \
        --cgroup "$BAD" >"$WORK/bad-$r.json" &
      bad=$!
      "$TICKLOAD" "${good[@]}" >"$WORK/beside-$r.json"
      wait $bad
      wait $hogs
    done
    stop_scx INT
    python3 - "$WORK" "$(basename "$bin")" "$t" <<'PY'
import json, sys
w, name, t = sys.argv[1:4]
runs = {n: [json.load(open(f"{w}/{n}-{r}.json")) for r in (1, 2)] for n in ("alone", "beside")}
pct = lambda rs: 100 * sum(r["misses"] for r in rs) / max(1, sum(r["ticks"] for r in rs))
p50 = lambda rs: " / ".join(f"{r['lateness_quantiles_ms'][50]:.1f}" for r in rs)
mspt = lambda rs: sum(r["total"]["mspt_mean_ms"] * r["ticks"] for r in rs) / max(1, sum(r["ticks"] for r in rs))
cpu = min(json.load(open(f"{w}/bad-{r}.json"))["ticks"] for r in (1, 2)) * 70 / 1000 / 8
p99 = lambda rs: " / ".join(f"{r['total']['mspt_p99_ms']:.1f}" for r in rs)
print(f"# turn {t} {name}: overloaded server >= {cpu:.2f} CPUs; MSPT p99 alone {p99(runs['alone'])} beside {p99(runs['beside'])}")
print(f"# turn {t} {name}: alone {pct(runs['alone']):.2f} % missed (p50 {p50(runs['alone'])} ms), "
      f"beside {pct(runs['beside']):.2f} % (p50 {p50(runs['beside'])} ms); MSPT alone {mspt(runs['alone']):.1f} "
      f"beside {mspt(runs['beside']):.1f} ms")
PY
  done
done
