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
# commit and the figures it printed (its "# " lines) and failures.
keep_record() { # NAME RC SECONDS OUTPUT RECORDS COMMIT
  python3 - "$@" >>"$5" <<'PY' || true
import datetime, json, sys
name, rc, secs, out, _, commit = sys.argv[1:7]
lines = open(out, errors="replace").read().splitlines()
print(json.dumps({
    "scenario": name,
    "result": {"0": "pass", "77": "skip"}.get(rc, "fail"),
    "seconds": int(secs),
    "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
    "figures": [l[2:] for l in lines if l.startswith("# ")],
    "failures": [l for l in lines if l.startswith("FAIL")],
}))
PY
}

# The commit being tested, marked when the tree has changes.
commit_id() {
  echo "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo '+uncommitted')"
}

# The CPU time the CPU hogs beside the servers (stress-ng) had so far, in
# clock ticks
hog_ticks() {
  local p sum=0 f
  for p in $(pgrep stress-ng); do
    f=($(sed 's/.*) //' /proc/"$p"/stat 2>/dev/null)) || continue
    ((sum += ${f[11]:-0} + ${f[12]:-0}))
  done
  echo $sum
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
