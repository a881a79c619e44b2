#!/usr/bin/env bash
# The load of vm/niced_work_is_not_starved, repeated: where do the nice-19
# probe's long waits come from? A nice-19 sleeper logs each wake's overshoot.
source "$(dirname "$0")/../../../tests/lib.sh"
CG=$(make_cgroup tick)
cat >"$WORK/sleeper.py" <<'PY'
import time, sys
t0 = time.monotonic(); nxt = t0; worst = []
while time.monotonic() - t0 < 14:
    nxt += 0.1
    d = nxt - time.monotonic()
    if d > 0: time.sleep(d)
    late = time.monotonic() - nxt
    if late > 0.2: worst.append((round(nxt - t0, 2), round(late * 1000)))
    if late > 0.1: nxt = time.monotonic()
print("sleeper waits >200 ms (at s, ms):", worst)
PY
round() {
  local mode=$1
  [[ $mode == scx ]] && start_scx --tick-cgroup tick
  stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local hogs=$!
  nice -n 19 stress-ng --cpu 1 --timeout 15s --metrics-brief --temp-path "$WORK" >"$WORK/niced" 2>&1 &
  local niced=$!
  nice -n 19 python3 "$WORK/sleeper.py" &
  local sl=$!
  nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json >"$WORK/probe.json" &
  local probe=$!
  "$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load"
  wait $probe $sl $hogs $niced
  python3 -c "
import json; p=json.load(open('$WORK/probe.json'))['total']
print('$mode probe', p['ticks'], 'ticks, start lateness max', round(p['lateness_max_ms']), 'stall', round(p['stall_max_ms']))"
  echo "$mode niced hog: $(awk '/metrc:.* cpu /{print $5}' "$WORK/niced")"
  if [[ $mode == scx ]]; then stop_scx INT; tail -3 "$WORK/scx.err"; fi
}
for m in ${MODES:-scx eevdf scx scx eevdf scx}; do [[ -n ${DROP:-} ]] && echo 3 >/proc/sys/vm/drop_caches; round $m; done
