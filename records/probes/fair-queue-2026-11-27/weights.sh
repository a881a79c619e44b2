#!/usr/bin/env bash
# nice-19 hog vs nice-0 twin beside 24 hogs: EEVDF and scx_tick
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
CG=$(make_cgroup tick)
round() {
  [[ $1 == scx ]] && start_scx --tick-cgroup tick
  stress-ng --cpu 24 --timeout 15s --temp-path "$WORK" >/dev/null 2>&1 &
  local hogs=$!
  hog=(-n 1 --work-ms 10 --period-ms 10 --game-server --duration-s 14 --json)
  nice -n 19 "$TICKLOAD" "${hog[@]}" >"$WORK/niced.json" &
  local a=$!
  "$TICKLOAD" "${hog[@]}" >"$WORK/twin.json" &
  local b=$!
  if [[ -n ${SLEEPER:-} ]]; then
    nice -n 19 "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --json >/dev/null &
    "$TICKLOAD" -n 1 --work-ms 1 --period-ms 100 --duration-s 14 --policy fifo --json >/dev/null &
  fi
  "$TICKLOAD" -n 2 --work-ms 5 --duration-s 14 --cgroup "$CG" >"$WORK/load"
  wait $a $b $hogs; sleep 1
  python3 -c "
import json; a=json.load(open('$WORK/niced.json'))['total']; b=json.load(open('$WORK/twin.json'))['total']
print('$1', 'nice19', a['ticks'], 'nice0', b['ticks'], 'stall', round(a['stall_max_ms']))"
  [[ $1 == scx ]] && { cat /proc/$(pgrep -f tickload | head -1)/status >/dev/null 2>&1; stop_scx INT; }
  true
}
for m in ${MODES:-eevdf scx}; do round $m; done
