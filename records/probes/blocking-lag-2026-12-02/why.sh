#!/usr/bin/env bash
# Where the well-behaved server's time goes beside a lag machine that
# blocks (BLOCKS times a tick) and one that does not: one round each,
# sched_switch and sched_wakeup traced, analysed by why.py in the guest.
HERE=$(cd "$(dirname "$0")" && pwd)
source "$HERE/../../../tests/lib.sh"
SCX=${PROBE_SCX:-$SCX}
GOOD=$(make_cgroup good)
BAD=$(make_cgroup bad)
SECS=8
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
echo mono >$T/trace_clock
echo 16384 >$T/buffer_size_kb
echo 1 >$T/events/sched/sched_wakeup/enable
echo 1 >$T/events/sched/sched_switch/enable
good=(-n 4 --work-ms 12 --period-ms 50 --duration-s $SECS --json --cgroup "$GOOD" --seed 1)
start_scx --tick-cgroup good --tick-cgroup bad
for blocks in ${BLOCK_LIST:-0 4}; do
  stress-ng --cpu 4 --timeout $((SECS + 1))s >/dev/null 2>&1 &
  hogs=$!
  echo >$T/trace; echo 1 >$T/tracing_on
  "$TICKLOAD" -n 3 --work-ms 70 --blocks "$blocks" --game-server --period-ms 50 --duration-s $SECS --json \
    --cgroup "$BAD" >"$WORK/bad-$blocks.json" &
  bad=$!
  "$TICKLOAD" "${good[@]}" --ticks-log "$WORK/good-$blocks.ticks" >"$WORK/beside-$blocks.json" &
  gp=$!
  sleep 1
  ls /proc/$gp/task >"$WORK/good-$blocks.tids"; ls /proc/$bad/task >"$WORK/bad-$blocks.tids"
  wait $gp; wait $bad; echo 0 >$T/tracing_on
  wait $hogs
  cat $T/trace >"$WORK/b$blocks.trace"
  echo "# blocks $blocks: $(grep -c . "$WORK/b$blocks.trace") trace lines, lost: $(grep -c LOST "$WORK/b$blocks.trace")"
  python3 "$HERE/why.py" "$WORK" "$blocks"
done
stop_scx INT
