#!/usr/bin/env bash
# `scx_tick topology` prints the seed's table and a choice (JSON too), and
# `check-config` validates a file without loading, both as real processes.
source "$(dirname "$0")/../lib.sh"
"$SCX" topology >"$WORK/topo" 2>&1 || fail "topology failed: $(cat "$WORK/topo")"
grep -q "CPU  CORE SOCKET NODE   L1d:L1i:L2:L3" "$WORK/topo" || fail "no seed table header: $(head -3 "$WORK/topo")"
rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ ' "$WORK/topo")
((rows == $(nproc))) || fail "$rows table rows for $(nproc) CPUs"
grep -qE "^Tick CPUs scx_tick would choose|^No tick CPU choice" "$WORK/topo" || fail "no choice line"
"$SCX" topology --json >"$WORK/topo.json" || fail "topology --json failed"
python3 - "$WORK/topo.json" "$(nproc)" <<'PY' || fail "topology --json is not the expected JSON"
import json, sys
t = json.load(open(sys.argv[1]))
assert len(t["machine"]["cpus"]) == int(sys.argv[2])
assert t["choice"] is None or 0 not in t["choice"]["tick_cpus"]
assert t["choice"] is None or len(t["choice"]["tick_cpus"]) <= t["max_tick_cpus"]
PY
note "$(grep -E '^Tick CPUs|^No tick' "$WORK/topo")"
# a count that cannot be chosen: the table, then the error once (stderr)
set +e; "$SCX" topology --tick-cpus 999 >"$WORK/topo" 2>&1; rc=$?; set -e
((rc == 1)) || fail "topology --tick-cpus 999 exited $rc: $(cat "$WORK/topo")"
n=$(grep -c "999 tick CPUs requested" "$WORK/topo")
((n == 1)) || fail "topology --tick-cpus 999 says its error $n times: $(tail -3 "$WORK/topo")"
cat >"$WORK/c.toml" <<'T'
steal_threshold_ms = 2
run_tasks_buffer_ms = 0.2
work_stealing = true
mid_tick_tasks = false
pin = "soft"
T
"$SCX" check-config "$WORK/c.toml" >"$WORK/out" 2>&1 || fail "check-config refused a good file: $(cat "$WORK/out")"
grep -q "steal threshold 2 ms" "$WORK/out" || fail "check-config output: $(cat "$WORK/out")"
# a file without a [[group]] is valid (flags may give the groups), but said
grep -q "no tick group: .*expected at least one \[\[group\]\]" "$WORK/out" || fail "check-config gives no warning for a file without groups: $(cat "$WORK/out")"
: >"$WORK/empty.toml"
"$SCX" check-config "$WORK/empty.toml" >"$WORK/out" 2>&1 || fail "check-config refused an empty file: $(cat "$WORK/out")"
grep -q "no tick group" "$WORK/out" || fail "check-config gives no warning for an empty file: $(cat "$WORK/out")"
note "$(head -1 "$WORK/out")"
