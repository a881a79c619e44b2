#!/usr/bin/env bash
# Every bad flag or config value is refused before anything is loaded, with
# a one-line message naming the key and what is allowed.
source "$(dirname "$0")/../lib.sh"
NCPU=$(nproc)
cat >"$WORK/typo.toml" <<'T'
steal_treshold_ms = 3
T
cat >"$WORK/range.toml" <<'T'
run_tasks_buffer_ms = -1
T
cat >"$WORK/good.toml" <<'T'
stealThresholdMillis = 2
enableMidTickTasks = false
T
# args | expected message fragment
CASES=(
  "--tick-cpus 0|allowed: a count of 1 or more"
  "--tick-cpus 999|tick CPUs requested"
  "--tick-cpus $NCPU-$((NCPU + 3))|does not exist or is offline"
  "--tick-cpus 1,1|listed twice"
  "--tick-cpus 3-1|runs backwards"
  "--tick-cpus x|allowed: ids and ranges"
  "--steal-threshold-ms -1|steal_threshold_ms (--steal-threshold-ms) = -1: out of range"
  "--run-tasks-buffer-ms 500|run_tasks_buffer_ms (--run-tasks-buffer-ms) = 500: out of range"
  "--slice-ms 0|slice_ms (--slice-ms) = 0: out of range"
  "--pin firm|invalid value 'firm'"
  "--tick-cgroup tick,period=0|period_ms = 0: out of range"
  "--tick-cgroup tick,speed=1|unknown option \"speed\""
  "--config $WORK/missing.toml|cannot read the configuration file"
  "--config $WORK/typo.toml|unknown field \`steal_treshold_ms\`"
  "--config $WORK/range.toml|run_tasks_buffer_ms (--run-tasks-buffer-ms) = -1"
  "check-config $WORK/typo.toml|unknown field"
)
n=0
for c in "${CASES[@]}"; do
  args=${c%%|*} want=${c#*|}
  set +e
  # shellcheck disable=SC2086
  "$SCX" $args >"$WORK/out" 2>"$WORK/err"
  rc=$?
  set -e
  ((rc != 0)) || fail "'$args' was accepted"
  # the first line names the problem
  head -1 "$WORK/err" | grep -qF -- "$want" || fail "'$args': first line lacks '$want': $(cat "$WORK/err")"
  n=$((n + 1))
done
note "$n bad inputs refused with clear messages, e.g. $(head -1 "$WORK/err")"
"$SCX" check-config "$WORK/good.toml" >"$WORK/out" 2>&1 || fail "a good config was refused: $(cat "$WORK/out")"
grep -q "valid" "$WORK/out" || fail "check-config printed: $(cat "$WORK/out")"
