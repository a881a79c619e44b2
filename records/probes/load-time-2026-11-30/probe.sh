# start -> state enabled, for two builds in turns, 4 rounds; 8 hogs in rounds 3-4
set -u
D=${D:-/work/main/results/loadtime}  # holds scx_tick_pre and scx_tick_new
mkdir -p /sys/fs/cgroup/tick 2>/dev/null || true
one() {
  local bin=$1 s e
  s=$(date +%s%N)
  $bin --tick-cgroup tick >/dev/null 2>/tmp/err &
  local p=$!
  for i in $(seq 1 1200); do [ "$(cat /sys/kernel/sched_ext/state)" = enabled ] && break; sleep 0.05; done
  e=$(date +%s%N)
  kill -INT $p; wait $p
  for i in $(seq 1 100); do [ "$(cat /sys/kernel/sched_ext/state)" = disabled ] && break; sleep 0.05; done
  echo "$(basename $bin) $2 $(( (e - s) / 1000000 ))"
}
for r in 1 2 3; do one $D/scx_tick_pre idle; one $D/scx_tick_new idle; done
for r in 1 2 3; do one $D/scx_tick_new idle; one $D/scx_tick_pre idle; done
stress-ng --cpu 8 --temp-path /tmp --timeout 120 >/dev/null 2>&1 &
H=$!
sleep 1
for r in 1 2; do one $D/scx_tick_pre hogs; one $D/scx_tick_new hogs; done
kill $H; wait $H 2>/dev/null
