# Helpers for the scenario tests (sourced). VM scenarios run inside the
# guest as root; each exits 0 on pass, 77 on skip, anything else on failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh" # sched_state, wait_sched_state, stop_hogs
SCX="$ROOT/target/release/scx_tick"
TICKLOAD="$ROOT/target/release/tickload"
TRACEREPLAY="$ROOT/target/release/tracereplay"
WORK="$(mktemp -d /tmp/scx_test.XXXXXX)"
SCX_PID=""

fail() { echo "FAIL: $*" >&2; dump_scx; exit 1; }
# fail marked "[catches NAMES]" (bpf/breakages.h): scripts/mutants.sh counts only a marked failure as a catch
fail_catches() { echo "FAIL${1:+ [catches $1]}: ${*:2}" >&2; dump_scx; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
# A skip for a fact of the platform, not of the set-up (the only skips
# that CI, CI=true, does not count as failures: scripts/test.sh).
skip_platform() { echo "SKIP (platform): $*" >&2; exit 77; }
# need CMD...: the commands scripts/setup.sh installs; missing, the
# scenario skips, or fails after setup (scripts/test.sh sets SCX_TICK_SET_UP).
need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null && continue
    [[ -n "${SCX_TICK_SET_UP:-}" ]] && fail "$c is missing although scripts/setup.sh ran (it installs it)"
    skip "$c is missing (scripts/setup.sh installs it)"
  done
}
note() { echo "# $*"; }

dump_scx() {
  [[ -s "$WORK/scx.err" ]] || return 0
  # the exit reason and the stalled task lead the kernel's debug dump
  echo "--- scx_tick stderr (head)" >&2; head -30 "$WORK/scx.err" >&2
  echo "--- scx_tick stderr (tail)" >&2; tail -20 "$WORK/scx.err" >&2
  return 0
}


# SCX_TICK_MODE=userspace runs a scenario against `scx_tick --userspace`.
MODE_ARGS=()
[[ "${SCX_TICK_MODE:-}" == userspace ]] && MODE_ARGS=(--userspace)

# Every BPF-mode scenario runs under a short sched_ext watchdog, so a task
# stalled anywhere for 5 s ejects the scheduler and fails the scenario (the
# kernel's 30 s default is longer than any scenario).
WATCHDOG_ARGS=()
[[ "${SCX_TICK_MODE:-}" == userspace ]] || WATCHDOG_ARGS=(--watchdog-ms "${SCX_TICK_WATCHDOG_MS:-5000}")

# Start scx_tick in the background with the given flags; wait until enabled.
# Its machine output (--stats-json; the scenario's own file if it names
# one) is in $STATS_JSON: the statistics the scenarios read (read_totals,
# group_stat); the human summary in scx.out is for the record only.
start_scx() {
  local wd=("${WATCHDOG_ARGS[@]}") js=() a prev=""
  [[ " $* " == *" --watchdog-ms "* ]] && wd=()
  STATS_JSON="$WORK/scx.jsonl"
  for a in "$@"; do
    [[ "$prev" == --stats-json ]] && STATS_JSON=$a
    prev=$a
  done
  [[ "$STATS_JSON" == - ]] && STATS_JSON="$WORK/scx.out"
  [[ " $* " == *" --stats-json "* ]] || js=(--stats-json "$STATS_JSON" --stats-json-no-histograms)
  # loaded at nice -20, run at 0 (threads_nice_0)
  nice -n -20 "$SCX" "${MODE_ARGS[@]}" "${wd[@]}" "${js[@]}" "$@" >"$WORK/scx.out" 2>"$WORK/scx.err" &
  SCX_PID=$!
  local rc=0
  wait_sched_state enabled 120 "$SCX_PID" || rc=$?
  ((rc != 2)) || fail "scx_tick exited before reaching state enabled"
  ((rc == 0)) || fail "scx_tick did not reach state enabled in 120 s (now: $(sched_state))"
  threads_nice_0 "$SCX_PID"
  grep -q scx_tick /sys/kernel/sched_ext/root/ops || fail "ops is not scx_tick: $(cat /sys/kernel/sched_ext/root/ops)"
}

# Stop scx_tick with signal $1; sets SCX_RC.
stop_scx() {
  # already gone (ejected, crashed): its exit status and stderr tell why
  kill -0 "$SCX_PID" 2>/dev/null || { set +e; wait "$SCX_PID"; SCX_RC=$?; set -e; SCX_PID=""; fail "scx_tick exited by itself before it was stopped (exit $SCX_RC)"; }
  kill -"$1" "$SCX_PID"
  set +e; wait "$SCX_PID"; SCX_RC=$?; set -e
  SCX_PID=""
}

# After CPU hotplug: wait (bounded, default 60 s) until scx_tick logged its
# Nth re-attach and the scheduler is enabled again.
reattached() {
  local n=$1 secs=${2:-60} i
  for ((i = 0; i < secs * 10; i++)); do
    if (($(grep -c "re-attaching" "$WORK/scx.err") >= n)) && [[ "$(sched_state)" == enabled ]]; then return 0; fi
    kill -0 "$SCX_PID" 2>/dev/null || fail "scx_tick exited after hotplug"
    sleep 0.1
  done
  fail "no re-attach #$n after hotplug (state $(sched_state))"
}

# scx_tick's exit totals as shell variables: tot_ticks, tot_misses,
# tot_dispatch_stolen, ... from the last --stats-json line, the one scx_tick
# writes as it exits (`"sample": "exit"`): its machine-wide counters, and
# the tick groups' counters summed over the groups.
read_totals() {
  local vars
  vars=$(exit_line | python3 -c '
import json, sys
last = json.load(sys.stdin)
tot = {k: v for k, v in last.items() if type(v) is int}
for g in last["groups"].values():
    for k, v in g.items():
        if type(v) is int and k not in last:
            tot[k] = tot.get(k, 0) + v
for k, v in tot.items():
    print(f"tot_{k}={v}")
') || fail "no exit totals in scx_tick's --stats-json ($STATS_JSON)"
  eval "$vars"
}

# scx_tick's exit line: the last --stats-json line, written as it exits
# (`"sample":"exit"`, the whole run as one sample), on stdout.
exit_line() {
  local last
  last=$(tail -n 1 "$STATS_JSON" 2>/dev/null) || true
  [[ "$last" == *'"sample":"exit"'* ]] || fail "no exit line (\"sample\":\"exit\") at the end of scx_tick's --stats-json ($STATS_JSON)"
  printf '%s\n' "$last"
}

# A tick group's statistic on scx_tick's exit line: group_stat GROUP KEY
# (the --stats-json field names; scx_tick --help-stats lists them).
group_stat() {
  exit_line | python3 -c 'import json, sys; print(json.load(sys.stdin)["groups"][sys.argv[1]][sys.argv[2]])' "$1" "$2" \
    || fail "no statistic $2 of group $1 on scx_tick's exit line ($STATS_JSON)"
}

# Scenario analysis runs at nice -20: python3 starts in about a second in
# the idle emulated guest but took 10-20 s beside hogs that outlive a
# scenario's measurement (3 json_field calls were 33 s of
# vm/ticks_beat_default_scheduler_under_load's 71). It runs between or
# after the measured phases, never beside one. (nice runs the program, not
# this function.)
python3() { nice -n -20 python3 "$@"; }

# Arithmetic for the scenarios' notes: calc EXPR [DIGITS] (awk's), and
# pct PART WHOLE (per cent, 2 digits; 0 for an empty whole)
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }
pct() { awk -v l="$1" -v s="$2" 'BEGIN { printf "%.2f", 100 * l / (s ? s : 1) }'; }
# COUNT per SECS seconds, 3 decimals (a zero span divides by 1: a stopped
# log is caught by its scenario's own check, not by awk dividing by zero)
per_s() { calc "$1 / ($2 > 0 ? $2 : 1)" 3; }

# The kernel must not have kicked the scheduler out or seen a stall.
check_dmesg_clean() {
  if dmesg | grep -iE 'sched_ext.*(errored|error|stall|watchdog)|runnable task stall' >"$WORK/dmesg.bad"; then
    cat "$WORK/dmesg.bad" >&2
    fail "sched_ext errors in dmesg"
  fi
}

# The classes of the Folia-like server (tests/fixtures/RegionServer.java):
# scripts/setup.sh compiles them on the host, where javac takes a second
# (about 20 s in the emulated guest); compiled here when that copy is
# missing or older than the source. Prints the class path.
region_server_classes() {
  local src="$ROOT/tests/fixtures/RegionServer.java" cached="$CACHE_DIR/java"
  if [[ "$cached/RegionServer.class" -nt "$src" ]]; then echo "$cached"; return 0; fi
  javac -d "$WORK/classes" "$src" >&2 || return 1
  echo "$WORK/classes"
}

# A JSON field of tickload's --json output: json_field FILE KEY
json_field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# Make a cgroup (v2) for tick runners; prints its path.
make_cgroup() {
  local cg=/sys/fs/cgroup/$1
  mkdir -p "$cg"
  echo "$cg"
}

cleanup() {
  [[ -n "$SCX_PID" ]] && kill -INT "$SCX_PID" 2>/dev/null && wait "$SCX_PID" 2>/dev/null
  stop_hogs
  rm -rf "$WORK"
}
trap cleanup EXIT
# tools like stress-ng want a writable working directory
cd "$WORK"

# The stats scenarios (BPF and userspace mode): scx_tick's exit summary
# against tickload's own --json counts in $WORK/heavy.json and light.json.
check_heavy_light_misses() { # [the breakages its heavy-misses check catches]
  grep "scx_tick summary:" "$WORK/scx.out" | sed 's/^/# /'
  local scx_heavy scx_light own_heavy own_light own_light_ticks
  scx_heavy=$(group_stat heavy misses)
  scx_light=$(group_stat light misses)
  own_heavy=$(json_field "$WORK/heavy.json" misses)
  own_light=$(json_field "$WORK/light.json" misses)
  note "heavy: scx_tick ${MODE_ARGS[*]} $scx_heavy misses, tickload $own_heavy; light: scx_tick $scx_light, tickload $own_light"
  ((own_heavy > 100)) || fail "the heavy group should miss nearly every tick (tickload: $own_heavy)"
  python3 -c "import sys; a,b=int(sys.argv[1]),int(sys.argv[2]); sys.exit(0 if abs(a-b) <= 0.05*b else 1)" \
    "$scx_heavy" "$own_heavy" || fail_catches "${1:-}" "heavy misses differ by more than 5%: scx_tick $scx_heavy, tickload $own_heavy"
  # The light group agrees both ways: a miss of the light workload (an
  # emulation stall of the whole guest, or a runner started late) is a miss
  # scx_tick must count too. Every thread of the group is a runner to the
  # scheduler: tickload's main thread and each runner's first and last
  # wake-ups (spawn to barrier, last tick to exit) are ticks the workload
  # does not count, and under emulation one of them can take longer than a
  # period: one such miss per thread (3) is allowed either way.
  own_light_ticks=$(json_field "$WORK/light.json" ticks)
  note "light: the workload missed $own_light of $own_light_ticks ticks"
  ((scx_light <= own_light + 3 && scx_light + 3 >= own_light)) \
    || fail "scx_tick reports $scx_light misses for the light group, the workload saw $own_light"
}

# A --stats-json stream: one object per line, counters never go backwards.
check_stats_json() {
  python3 - "$1" <<'PY' || fail "the JSON stream is broken"
import json, sys
prev = None
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) >= 5, f"only {len(lines)} JSON lines"
for l in lines:
    m = json.loads(l)
    for g, v in m["groups"].items():
        for k in ("ticks", "misses", "late_starts", "steals"):
            if prev is not None:
                assert v[k] >= prev["groups"][g][k], (g, k, v[k], prev["groups"][g][k])
    prev = m
print("# JSON lines:", len(lines), "last heavy:", {k: prev["groups"]["heavy"][k] for k in ("ticks", "misses", "interval_miss_pct")})
PY
}
