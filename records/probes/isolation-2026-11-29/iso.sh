#!/usr/bin/env bash
# Probe (issue 27): the bench's isolation cells (a well-behaved server of 4
# runners x 12 ms per 50 ms beside 4 CPU hogs, alone and beside an
# overloaded server of 3 never-sleeping runners x 70 ms in its own tick
# group) under scx_tick builds in turns (VARIANTS, binaries in
# results/p27/scx_tick.NAME), ROUNDS rounds, one guest.
source /work/main/tests/lib.sh
OUT=/tmp/iso; mkdir -p "$OUT"
CG=$(make_cgroup tick)
BAD=$(make_cgroup overloaded)
SECS=8
cell() { # name beside(0/1)
  stress-ng --cpu 4 --timeout $((SECS + 2))s >/dev/null 2>&1 &
  local hogs=$! over=
  sleep 0.5
  if [[ $2 == 1 ]]; then
    "$TICKLOAD" -n 3 --period-ms 50 --work-ms 70 --game-server --seed 7 --duration-s $SECS --cgroup "$BAD" --json >"$OUT/$1.bad.json" &
    over=$!
  fi
  "$TICKLOAD" -n 4 --period-ms 50 --work-ms 12 --seed 1 --duration-s $SECS --cgroup "$CG" --json >"$OUT/$1.json" || echo "tickload failed $1"
  [[ -n $over ]] && wait $over
  wait $hogs 2>/dev/null
  echo "cell $1 done" >&2
}
for r in $(seq ${ROUNDS:-3}); do
  for v in ${VARIANTS:-main new}; do
    SCX=/work/main/results/p27/scx_tick.$v start_scx --tick-cgroup tick --tick-cgroup overloaded
    cell $v-alone-$r 0
    cell $v-beside-$r 1
    stop_scx INT
  done
done
echo "=== tar"; tar cz -C /tmp iso | base64 -w0; echo; echo done
