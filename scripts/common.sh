# Shared by the scripts: paths and small helpers. Sourced, not run.
CACHE_DIR="${SCX_TICK_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/scx_tick}"
KERNEL_CACHE="$CACHE_DIR/kernel"
RUST_MIN=1.91
# virtme-ng (vm.sh --vng), pinned: scripts/setup.sh installs it into a venv
# of its own here, so the system's Python is never touched.
VNG_VERSION=1.42
VNG_VENV="$CACHE_DIR/virtme-ng-$VNG_VERSION"
export BPF_CLANG="${BPF_CLANG:-clang-19}"

log() { echo "[scx_tick] $*" >&2; }

# The sched_ext state (enabled, disabled, ...; "missing": no sched_ext).
sched_state() { cat /sys/kernel/sched_ext/state 2>/dev/null || echo missing; }

# Wait (polling, at most SECS seconds) until the sched_ext state is WANT;
# with PID, give up as soon as that process (the scheduler) has exited.
# 0: reached, 1: not in time, 2: PID exited first.
wait_sched_state() { # WANT [SECS] [PID]
  local want=$1 secs=${2:-60} pid=${3:-} i
  for ((i = 0; i < secs * 10; i++)); do
    [[ "$(sched_state)" == "$want" ]] && return 0
    [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null && return 2
    sleep 0.1
  done
  [[ "$(sched_state)" == "$want" ]]
}
die() { echo "[scx_tick] error: $*" >&2; exit 1; }

# One JSON line for a scenario's run into RECORDS: its name, result, seconds,
# commit and the figures it printed (its "# " lines) and failures. A run
# retried after an emulator fault (scripts/test.sh's "RETRY" line) leaves
# one line per attempt ("attempt": 1, result "emulator fault", then 2;
# the seconds are the two attempts'). Fails (with a message) when the record
# cannot be written.
keep_record() { # NAME RC SECONDS OUTPUT RECORDS COMMIT
  python3 - "$@" >>"$5" <<'PY' || { echo "keep_record: could not write $1's record to $5" >&2; return 1; }
import datetime, json, sys
name, rc, secs, out, _, commit = sys.argv[1:7]
lines = open(out, errors="replace").read().splitlines()
retry = next((i for i, l in enumerate(lines) if l.startswith("RETRY")), None)
# the first run of a retried scenario: an emulator fault, or a failure run again
first = "fail" if retry is not None and lines[retry].startswith("RETRY   after a failure") else "fault"
attempts = [(lines, rc)] if retry is None else [(lines[: retry + 1], first), (lines[retry + 1 :], rc)]
for n, (part, result) in enumerate(attempts, 1):
    print(json.dumps({
        "scenario": name,
        "result": {"0": "pass", "77": "skip", "fault": "emulator fault"}.get(result, "fail"),
        "attempt": n,
        "seconds": int(secs),
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "figures": [l[2:] for l in part if l.startswith("# ")],
        "failures": [l for l in part if l.startswith("FAIL")],
        # a second run's reason (scripts/test.sh), and why a scenario skipped
        "retries": [l for l in part if l.startswith("RETRY")],
        "skips": [l for l in part if l.startswith("SKIP")],
    }))
PY
}

# The commit being tested, marked when the tree has changes.
commit_id() {
  echo "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo '+uncommitted')"
}

# A real server's own counter: COUNTER NAME prints it (mt_steps,
# ottd_ticks). wait_count polls it until it reaches N (SECS, default 120;
# 1 if it never did); mark_counts prints it for each NAME, a phase mark.
wait_count() { # COUNTER NAME N [SECS]
  local i
  for ((i = 0; i < ${4:-120} * 5; i++)); do
    (($("$1" "$2") >= $3)) && return 0
    sleep 0.2
  done
  return 1
}
mark_counts() { # COUNTER NAME...
  local fn=$1 n out=""
  shift
  for n in "$@"; do out+="$("$fn" "$n") "; done
  echo "$out"
}

# scx_tick's ticks/s and misses/s for GROUP, between the first and last
# full intervals of a --stats-json file: "TICKS MISSES"
group_rates() { # FILE GROUP
  python3 - "$1" "$2" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][1:-1]
a, b = lines[0]["groups"][sys.argv[2]], lines[-1]["groups"][sys.argv[2]]
dt = lines[-1]["uptime_s"] - lines[0]["uptime_s"]
print(f"{(b['ticks'] - a['ticks']) / dt:.3f} {(b['misses'] - a['misses']) / dt:.3f}")
PY
}

# Prometheus (Debian's) for scx_tick's endpoint at 127.0.0.1:9470, scraped
# every second, with the shipped alert rules: writes DIR/prometheus.yml and
# prints the command line's flags (storage in DIR, API at 127.0.0.1:9090).
prometheus_args() { # DIR
  cat >"$1/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$ROOT/examples/monitoring/alerts.yml"]
scrape_configs:
  - job_name: scx_tick
    static_configs: [{targets: ["127.0.0.1:9470"]}]
EOF
  echo "--config.file=$1/prometheus.yml --storage.tsdb.path=$1/tsdb --web.listen-address=127.0.0.1:9090"
}

# cpu_ticks PID...: the CPU time (utime + stime) the processes had so far,
# in clock ticks; one that is gone counts 0 (read by the shell itself: a
# process started per hog took 5 s for 9 hogs in a loaded guest)
cpu_ticks() {
  local p sum=0 f line
  for p in "$@"; do
    read -r line 2>/dev/null </proc/"$p"/stat || continue
    f=(${line##*) }) # after the comm: utime and stime are the 12th and 13th
    ((sum += ${f[11]:-0} + ${f[12]:-0}))
  done
  echo $sum
}
# The CPU time the CPU hogs beside the servers (stress-ng) had so far
# shellcheck disable=SC2046 # the PIDs are words
hog_ticks() { cpu_ticks $(pgrep stress-ng); }

# measure_window MARK: SECS seconds between two MARK calls (a real server's
# counters, scripts/common.sh's mark_counts). Sets WIN_FROM and WIN_TO (the
# marks), WIN_HOGS (the hogs' CPU time, in clock ticks) and WIN_NS (the
# window's length) over the same window: the marks take seconds in a loaded
# guest, so the hogs' CPUs divide by it, not by SECS.
measure_window() {
  local t0 h0
  t0=$(date +%s%N); h0=$(hog_ticks)
  WIN_FROM=$("$1"); sleep "$SECS"; WIN_TO=$("$1")
  WIN_HOGS=$(($(hog_ticks) - h0)) WIN_NS=$(($(date +%s%N) - t0))
}
# keep_window NAME: the last window kept under NAME (with WIN_AT, the
# script's SECONDS at its end), for load_window NAME to set WIN_* again:
# a scenario measures its phases first and reads the servers' logs after
# its hogs stop.
keep_window() {
  printf -v "${1}_window" %s "$WIN_FROM|$WIN_TO|$WIN_HOGS|$WIN_NS|$SECONDS"
}
load_window() {
  local w=${1}_window
  IFS='|' read -r WIN_FROM WIN_TO WIN_HOGS WIN_NS WIN_AT <<<"${!w}"
}

# The CPU hogs (stress-ng) stopped, and gone within 5 s: analysis runs after
# them (beside 8 of them every process started is slow: python3 took 7-10 s
# to start, about 1 s without).
stop_hogs() {
  local i
  pkill -f stress-ng 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do pgrep -f stress-ng >/dev/null || return 0; sleep 0.1; done
}

# SCHED_FIFO at PRIORITY for every thread of the processes PID... (0: back
# to SCHED_OTHER), as chrt -f would: the real servers' practical limit
threads_fifo() {
  local prio=$1 p t
  shift
  for p in "$@"; do for t in /proc/"$p"/task/*; do
    if ((prio)); then chrt -f -p "$prio" "${t##*/}" >/dev/null 2>&1 || true
    else chrt -o -p 0 "${t##*/}" >/dev/null 2>&1 || true; fi
  done; done
}

# Every thread of process PID back to nice 0: a scheduler is started at nice
# -20 (the verifier and the kernel's switch of every task are CPU work in
# its own threads: beside 8 hogs scx_tick took 15-20 s to attach at nice 0,
# 6 s so) and runs at 0 once attached, as users run it.
threads_nice_0() {
  local t
  for t in /proc/"$1"/task/*; do renice -n 0 -p "${t##*/}" >/dev/null 2>&1 || true; done
}
