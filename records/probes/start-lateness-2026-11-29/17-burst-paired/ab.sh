#!/usr/bin/env bash
# Probe (issue 27): the burst change against the build before it, in turns
# in one guest (ROUNDS rounds, default 3), on the bench's cells the check
# after it left in doubt: heavy-idle (6 runners x 20 ms per 50 ms, nothing
# else), isolation alone and beside an overloaded server (4 runners x 12 ms
# beside 4 hogs; beside 3 never-sleeping runners of 70 ms per 50 ms in their
# own group) and the headline (4 runners beside 8 hogs, a fork/pipe storm
# and cyclictest -i 1000 in the tick group). Builds: results/p27/scx_tick.NAME.
source /work/main/tests/lib.sh
OUT=/tmp/p27ab; mkdir -p "$OUT"
CG=$(make_cgroup tick); OCG=$(make_cgroup overloaded)
cell() { # name kind
  local name=$1 kind=$2 bg=() over=""
  case $kind in
    heavy) ;;
    alone|beside) stress-ng --cpu 4 --timeout 10s >/dev/null 2>&1 & bg+=($!) ;;
    head)
      stress-ng --cpu 8 --timeout 10s >/dev/null 2>&1 & bg+=($!)
      ( end=$((SECONDS + 9)); while ((SECONDS < end)); do hackbench -p -g 2 -f 5 -l 50 >/dev/null 2>&1; done ) & bg+=($!)
      ( sleep 1; echo "$BASHPID" >"$CG/cgroup.procs"; exec cyclictest -q -D 5 -i 1000 ) >/dev/null 2>&1 & bg+=($!) ;;
  esac
  sleep 0.5
  if [[ $kind == beside ]]; then
    "$TICKLOAD" -n 3 --period-ms 50 --work-ms 70 --game-server --seed 7 --duration-s 8 --cgroup "$OCG" --json >/dev/null 2>&1 &
    over=$!
  fi
  case $kind in
    heavy) "$TICKLOAD" -n 6 --period-ms 50 --work-ms 20 --seed 1 --duration-s 8 --cgroup "$CG" --json >"$OUT/$name.json" ;;
    head) "$TICKLOAD" -n 4 --period-ms 50 --work-ms 8 --jitter-ms 2 --spike-ms 40 --spike-pct 1 --seed 1 --duration-s 8 --cgroup "$CG" --json >"$OUT/$name.json" ;;
    *) "$TICKLOAD" -n 4 --period-ms 50 --work-ms 12 --seed 1 --duration-s 8 --cgroup "$CG" --json >"$OUT/$name.json" ;;
  esac
  [[ -n $over ]] && wait "$over"
  ((${#bg[@]})) && wait "${bg[@]}" 2>/dev/null
  echo "cell $name done" >&2
}
for r in $(seq "${ROUNDS:-3}"); do
  for v in ${VARIANTS:-cur burst}; do
    SCX=/work/main/results/p27/scx_tick.$v start_scx --tick-cgroup tick --tick-cgroup overloaded
    for k in heavy alone beside head; do cell "$v-$k-$r" "$k"; done
    stop_scx INT
  done
done
echo "=== tar"; tar cz -C /tmp p27ab | base64 -w0; echo; echo done
