#!/usr/bin/env bash
# The test command: set up a bare machine, run the host tests (cargo test,
# which replays the fuzzing corpus, lints, host scenarios), then every VM
# scenario in its own fresh guest (the short ones, "# guest: shared", one
# after another in one guest).
#
#   scripts/test.sh              everything
#   scripts/test.sh PATTERN...   only scenarios whose name contains a PATTERN
#   scripts/test.sh --list       list the scenarios
#   scripts/test.sh --no-setup   skip scripts/setup.sh (already done)
#   scripts/test.sh --vng        every VM scenario under virtme-ng instead
#                                (also SCX_TICK_VM=vng)
#
# SCX_TICK_FUZZ_S=N (N > 0) adds coverage-guided fuzzing, N s a target
# (scripts/fuzz.sh, its record "fuzz" among the scenarios'): its
# instrumented build of every crate took 6.5 of CI's 66 minutes on
# 2026-12-02 for 20 s of fuzzing, so the suite leaves it out by default
# (cargo test replays the committed corpus every run).
# SCX_TICK_SUITE_LIMIT_S (default 5040: 84 min; 80 until a slower host's
# run, set-up and fresh builds included, came near it) bounds the whole run: a
# scenario whose worst case (its guest's timeout, 330 s with a boot; 390
# under virtme-ng) would end past it is reported as not run (a failure),
# an emulator fault or a failure is run once more in a new guest (any
# failure: SCX_TICK_SECOND_RUN=0 turns that off) only while a second run
# fits, and the summary is
# still printed, before CI's 90 minutes end. In CI (CI=true, .ci/run) a
# skip fails unless it is the platform's ("SKIP (platform):").
# Every SCX_TICK_* variable set here reaches the guests too.
# SCX_TICK_RECORDS (default results/test-DATE.jsonl) receives one JSON
# object per scenario: name, result, seconds, commit and the figures it
# printed (its "# " lines); records/tests/ keeps the runs the docs cite.
#
# Scenarios: tests/host/*.sh run here, tests/vm/*.sh inside a 4-vCPU
# sched_ext guest (scripts/vm.sh); a VM scenario tagged "# Modes: bpf,
# userspace" runs again as userspace/NAME against `scx_tick --userspace`,
# and tests/userspace/*.sh are that mode's own; vng/NAME is scenario NAME
# in a virtme-ng guest (by default a representative few, after the others);
# oldest/NAME is scenario NAME in a guest booted with the oldest sched_ext
# kernel scripts/setup.sh unpacked (scripts/vm.sh --kernel oldest), where
# the scx headers' fallbacks for newer kfuncs run.
# Exit 0 = pass, 77 = skip, else fail.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh

SETUP=1 LIST=0 PATTERNS=() VM_MODE="${SCX_TICK_VM:-qemu}"
for a in "$@"; do
  case "$a" in
    --list) LIST=1 ;;
    --no-setup) SETUP=0 ;;
    --vng) VM_MODE=vng ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) PATTERNS+=("$a") ;;
  esac
done
[[ "$VM_MODE" == qemu || "$VM_MODE" == vng ]] || die "SCX_TICK_VM=$VM_MODE: must be qemu (the default) or vng"

# The virtme-ng path in every run (CI included): one scenario per thing it
# must carry, kept few (each guest boots ~3x slower than the plain one).
VNG_SUBSET=(vm/loads_and_names_itself vm/stats_match_the_workload)
# On the oldest kernel: loading and detaching, and the decisions against
# the model (its polls peek at queues through the fallback there). The
# tick claim there left the suite for time (74 s on a slower host, where
# the whole run took 64 min without set-up): docs/testing.md.
OLDEST_SUBSET=(vm/loads_and_names_itself vm/bpf_decisions_match_the_model)
# Scenarios that cannot pass in a virtme-ng guest, by name, and the limit of
# vng that stops them (docs/testing.md), e.g. [vm/NAME]="vng lacks X"; they
# are reported as skipped there, with the reason.
declare -A VNG_CANNOT=(
  [vm/runs_on_smt_numa_and_offline_cpus]="its guest shape (sockets, SMT, NUMA nodes) is QEMU's -smp/-numa, which scripts/vm.sh gives plain QEMU guests only"
  [vm/operators_guide_runs_under_systemd]="it boots systemd as the guest's PID 1 (scripts/vm.sh --systemd), which vng's own init does not hand over to"
)

selected() {
  local name=$1 p
  [[ ${#PATTERNS[@]} -eq 0 ]] && return 0
  for p in "${PATTERNS[@]}"; do [[ "$name" == *"$p"* ]] && return 0; done
  return 1
}

# Each scenario: its name, its file, where it runs (host, qemu or vng) and
# its policy mode (bpf or userspace).
NAMES=() FILES=() RUNNERS=() MODES=()
add() { selected "$1" && { NAMES+=("$1"); FILES+=("$2"); RUNNERS+=("$3"); MODES+=("${4:-bpf}"); }; return 0; }
add_vm() { # name file mode
  if [[ "$VM_MODE" == vng ]]; then add "vng/$1" "$2" vng "$3"; else add "$1" "$2" qemu "$3"; fi
}
for f in tests/host/*.sh; do n="${f#tests/}"; add "${n%.sh}" "$f" host; done
for f in tests/vm/*.sh; do n="${f#tests/vm/}"; add_vm "vm/${n%.sh}" "$f" bpf; done
for f in tests/vm/*.sh; do
  grep -q '^# Modes:.*userspace' "$f" || continue
  n="${f#tests/vm/}"; add_vm "userspace/${n%.sh}" "$f" userspace
done
for f in tests/userspace/*.sh; do n="${f#tests/}"; add_vm "${n%.sh}" "$f" userspace; done
# A filtered run takes the extra vng/ and oldest/ ones only for a pattern
# that names them (`test.sh hotplug`: the plain scenarios; `test.sh vng/`:
# the vng subset).
add_again() { # runner (also the names' prefix) scenario...
  local r=$1 n
  shift
  for n in "$@"; do
    [[ ${#PATTERNS[@]} -eq 0 || "${PATTERNS[*]}" == *$r* ]] && add "$r/$n" "tests/$n.sh" "$r" bpf
  done
  return 0
}
if [[ "$VM_MODE" == qemu ]]; then
  add_again vng "${VNG_SUBSET[@]}"
  add_again oldest "${OLDEST_SUBSET[@]}"
fi
if [[ ${#PATTERNS[@]} -gt 0 && ${#NAMES[@]} -eq 0 ]]; then
  die "no scenario matches ${PATTERNS[*]} (scripts/test.sh --list shows them)"
fi
if [[ $LIST -eq 1 ]]; then
  for i in "${!NAMES[@]}"; do echo "${NAMES[$i]}  $(sed -n 2p "${FILES[$i]}" | sed 's/^# //')"; done
  exit 0
fi

[[ $SETUP -eq 1 ]] && { bash scripts/setup.sh || die "setup failed"; }
# After setup, a scenario that lacks a tool setup installs fails (lib.sh:
# need): a skip would pass the suite without what it tests.
[[ $SETUP -eq 1 ]] && export SCX_TICK_SET_UP=1

# A VM scenario in a fresh guest. Under TCG emulation (multi-threaded) the
# guest kernel has been seen to die of "Oops: int3" in code the kernel was
# patching (static keys flip on every scheduler attach/detach): an emulator
# race, not something a BPF scheduler can cause. Rarely, too, the guest
# kernel hangs while it boots, before the scenario (or scx_tick) has run at
# all (vm.sh exit 123; seen once in ~100 boots, 2026-11-24). Only these,
# the other emulator faults below (silence, QEMU's own assertion) and a
# scenario's SCHED_FIFO control standing still with it, announced, earn the
# scenario one more run in a new guest; any other failure counts.
# The knobs of the scenarios (SCX_TICK_WATCHDOG_MS, SCX_TICK_CHURN_S, ...)
# go into the guest with them.
VM_ENV=()
while IFS= read -r v; do VM_ENV+=(--env "$v=${!v}"); done < <(compgen -e | grep '^SCX_TICK_' || true)

# The first kernel report vm.sh printed for a dead guest is an int3 oops.
int3_death() {
  awk '/^\[vm.sh\] first kernel report/ { getline; print; exit }' "$1" | grep -q "Oops: int3"
}

# A scenario that needs a guest of another shape says so in a line
# "# guest: VM.SH-OPTIONS" (e.g. --cpus 8 --topology ... --nodes 2).
guest_shape() { # file
  local shape
  shape=$(sed -n 's/^# guest: //p' "$1" | grep -v '^shared$' | head -1)
  echo "${shape:---cpus ${SCX_TICK_TEST_CPUS:-4}}"
}

# The guest of a scenario: sets shape (its vm.sh shape and kernel options),
# env (the --env options, its mode's included) and vm (SCX_TICK_VM) in the
# caller's locals.
guest_of() { # file qemu|vng|oldest bpf|userspace
  read -ra shape <<<"$(guest_shape "$1")"
  env=("${VM_ENV[@]}") vm=$2
  # the kernel always named: an SCX_TICK_KERNEL of the caller's would reach every guest
  if [[ $2 == oldest ]]; then shape+=(--kernel oldest) vm=qemu; else shape+=(--kernel current); fi
  [[ $3 == userspace ]] && env+=(--env SCX_TICK_MODE=userspace)
  return 0
}

# why a run failed, in one line: its first FAIL line, else its exit status
first_fail() { grep -m1 '^FAIL' "$1" || echo "exit $2"; }

run_vm() { # file qemu|vng|oldest bpf|userspace
  local out rc timeout=300 env shape vm
  guest_of "$@"
  [[ $2 == vng ]] && timeout=360 # its guest boots slower
  out=$(mktemp)
  SCX_TICK_VM=$vm bash scripts/vm.sh "${shape[@]}" --timeout $timeout "${env[@]}" -- bash "$1" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  local why=""
  [[ $rc -eq 125 ]] && int3_death "$out" && why="the guest kernel died of an int3 oops in patched code (TCG emulation)"
  [[ $rc -eq 123 ]] && why="the guest kernel hung while booting, before the scenario ran (TCG emulation)"
  # Silent after boot: no line from the scenario and no kernel message in
  # the whole timeout. An ejection, a stall, a lockup or an oops prints one
  # at the guest's loglevel, so this is the emulator (seen once, 1aa93c9).
  [[ $rc -eq 124 ]] && ! grep -qE '^(# |FAIL)' "$out" &&
    ! grep -qE 'sched_ext|BUG:|soft lockup|hard LOCKUP|rcu.*stall|Oops|Kernel panic|blocked for more than' "$out" &&
    why="the guest went silent after boot: no line from the scenario, no kernel message in $timeout s (TCG emulation)"
  # A scenario with a SCHED_FIFO control saw it wait as long as the task
  # under test: no sched_ext scheduler can delay it, the guest stood still
  [[ $rc -ne 0 ]] && grep -q '^EMULATOR-STALL: ' "$out" &&
    why="the emulated guest stood still: $(grep -m1 -o 'a SCHED_FIFO task.*' "$out") (TCG emulation)"
  # QEMU 10.0's own assertion in its MSI-X emulation killed vng guests at boot (2026-11-25)
  [[ $rc -eq 125 ]] && grep -q "^qemu-system-[a-z0-9_]*: .*Assertion .* failed" "$out" &&
    why="QEMU itself died of an assertion in its device emulation ($(grep -m1 -o 'hw/[^:]*' "$out"))"
  # Any other failure earns one second run too, counted apart: the guest
  # is emulated on a shared 2-core machine, so a timing bound can fail once
  # in ~100 runs of a sound build (64 scenarios: about every other suite),
  # while a broken build fails both runs. scripts/mutants.sh turns it off
  # (SCX_TICK_SECOND_RUN=0): a breakage is caught by its first failure.
  local kind=fault first
  first=$(first_fail "$out" "$rc")
  if [[ -z "$why" && $rc -ne 0 && $rc -ne 77 && ${SCX_TICK_SECOND_RUN:-1} == 1 ]]; then
    why="after a failure ($first)" kind=failure
  fi
  if [[ -n "$why" ]] && ((SECONDS + timeout + 30 > LIMIT)); then
    echo "NO RETRY: $why, but a retry could run past the suite's ${LIMIT} s"
  elif [[ -n "$why" ]]; then
    echo "RETRY   $why; once more in a new guest"
    SCX_TICK_VM=$vm bash scripts/vm.sh "${shape[@]}" --timeout $timeout "${env[@]}" -- bash "$1"
    rc=$?
    if [[ $kind == fault ]]; then
      RETRIED+=("${name:-$1}")
      [[ $rc -eq 0 ]] && RETRIED_PASSED=$((RETRIED_PASSED + 1))
    else
      RERUN+=("${name:-$1}: $first")
      [[ $rc -eq 0 ]] && RERUN_PASSED=$((RERUN_PASSED + 1))
    fi
  fi
  rm -f "$out"
  return "$rc"
}

# A short scenario says "# guest: shared": the ones of one kind (runner and
# mode) run in one guest (tests/shared_guest.sh), which saves a boot each.
# Each one's part of the output (between the guest's markers), exit status
# and seconds are kept here for its turn; one that fails there runs again
# alone in a new guest (a second run after a failure, as in run_vm), and
# one the shared guest did not run (it was not clean, or died) runs alone.
declare -A SHARED_RC SHARED_OUT SHARED_SECS
shared() { grep -qx '# guest: shared' "$1"; }
# a shared guest's timeout for N scenarios: a boot, and a minute at most for
# each (the longest take about 65 s, most under 40)
shared_timeout() { echo $((120 + 60 * $1)); }
run_shared() { # index...
  local j files=() out env shape vm
  for j in "$@"; do files+=("${FILES[$j]}"); done
  guest_of "${FILES[$1]}" "${RUNNERS[$1]}" "${MODES[$1]}"
  echo "=== shared guest: ${#files[@]} scenarios (${files[*]})"
  out=$(mktemp)
  SCX_TICK_VM=$vm bash scripts/vm.sh "${shape[@]}" --timeout "$(shared_timeout ${#files[@]})" "${env[@]}" -- \
    bash tests/shared_guest.sh "${files[@]}" 2>&1 | tee "$out"
  for j in "$@"; do
    grep -q "^=== SHARED-BEGIN ${FILES[$j]}\$" "$out" || continue
    SHARED_OUT[$j]=$(mktemp)
    sed -n "\|^=== SHARED-BEGIN ${FILES[$j]}\$|,\|^=== SHARED-END ${FILES[$j]} |p" "$out" >"${SHARED_OUT[$j]}"
    read -r _ _ _ SHARED_RC[$j] SHARED_SECS[$j] < <(grep "^=== SHARED-END ${FILES[$j]} " "$out" || echo "x x x died 0")
  done
  rm -f "$out"
}

RECORDS=${SCX_TICK_RECORDS:-$ROOT/results/test-$(date -u +%Y%m%d-%H%M%S).jsonl}
mkdir -p "$(dirname "$RECORDS")"
COMMIT=$(commit_id)

PASSED=0 FAILED=0 SKIPPED=0 FAILURES=() FAIL_LINES=() RETRIED=() RETRIED_PASSED=0 RERUN=() RERUN_PASSED=0 NOT_RUN=() VNG_PASSED=0
LIMIT=${SCX_TICK_SUITE_LIMIT_S:-5040}
record() { # name rc seconds
  case $2 in
    0) PASSED=$((PASSED + 1)); [[ $1 == vng/* ]] && VNG_PASSED=$((VNG_PASSED + 1)); echo "ok      $1 (${3}s)" ;;
    77) SKIPPED=$((SKIPPED + 1)); echo "skipped $1" ;;
    *) FAILED=$((FAILED + 1)); FAILURES+=("$1"); echo "FAILED  $1 (exit $2, ${3}s)" ;;
  esac
}

if [[ ${#PATTERNS[@]} -eq 0 ]]; then
  t=$SECONDS
  log "cargo test"
  cargo test --release --locked --workspace 2>&1 | tail -n 40 | grep -E "^test |test result|panicked|error" ; rc=${PIPESTATUS[0]}
  record cargo-test "$rc" $((SECONDS - t))
  t=$SECONDS
  { cargo fmt --all --check && cargo clippy --release --locked --workspace --all-targets -q -- -D warnings; } >"/tmp/scx_tick-lint.log" 2>&1
  rc=$?; [[ $rc -ne 0 ]] && tail -30 /tmp/scx_tick-lint.log
  record lint "$rc" $((SECONDS - t))
fi
if [[ ${#PATTERNS[@]} -eq 0 && ${SCX_TICK_FUZZ_S:-0} != 0 ]]; then
  # coverage-guided fuzzing (scripts/fuzz.sh), each target from its
  # committed corpus for a bounded time; it writes its own record
  t=$SECONDS o=$(mktemp)
  bash scripts/fuzz.sh --seconds "$SCX_TICK_FUZZ_S" --record "$RECORDS" > >(tee "$o") 2>&1; rc=$?
  wait $! 2>/dev/null
  record fuzz "$rc" $((SECONDS - t))
  [[ $rc -ne 0 ]] && FAIL_LINES+=("fuzz: $(grep '^FAIL' "$o" | tail -1 | cut -c1-300)")
  rm -f "$o"
fi

for i in "${!NAMES[@]}"; do
  name=${NAMES[$i]} f=${FILES[$i]} runner=${RUNNERS[$i]} mode=${MODES[$i]}
  # the worst case of the next scenario: its guest's timeout and a retry's
  # boot (the retry itself runs only while the limit allows it, run_vm)
  case $runner in vng) worst=390 ;; host) worst=60 ;; *) worst=330 ;; esac
  if ((SECONDS + worst > LIMIT)); then
    NOT_RUN+=("$name"); FAILED=$((FAILED + 1)); FAILURES+=("$name")
    continue
  fi
  # the first of a kind of shared scenarios runs them all (two or more)
  if [[ $runner != host && -z "${SHARED_RC[$i]:-}" ]] && shared "$f"; then
    group=()
    for j in "${!NAMES[@]}"; do
      ((j >= i)) && [[ ${RUNNERS[$j]} == "$runner" && ${MODES[$j]} == "$mode" ]] &&
        shared "${FILES[$j]}" && group+=("$j")
    done
    # (past the time limit, they run alone, each held to its own worst case)
    if ((${#group[@]} > 1 && SECONDS + $(shared_timeout ${#group[@]}) <= LIMIT)); then run_shared "${group[@]}"; fi
  fi
  t=$SECONDS
  echo "=== $name"
  o=$(mktemp)
  if [[ $runner == vng && -n "${VNG_CANNOT[${name#vng/}]:-}" ]]; then
    echo "SKIP (platform): cannot run under virtme-ng: ${VNG_CANNOT[${name#vng/}]}" | tee "$o"; rc=77
  elif [[ ${SHARED_RC[$i]:-} == 0 || ${SHARED_RC[$i]:-} == 77 ]]; then
    cp "${SHARED_OUT[$i]}" "$o"; rc=${SHARED_RC[$i]}; t=$((SECONDS - SHARED_SECS[$i]))
    echo "(ran in the shared guest above, ${SHARED_SECS[$i]} s)"
  elif [[ -n "${SHARED_RC[$i]:-}" ]]; then
    first=$(first_fail "${SHARED_OUT[$i]}" "${SHARED_RC[$i]}")
    { cat "${SHARED_OUT[$i]}"
      if [[ ${SCX_TICK_SECOND_RUN:-1} == 1 ]] && ((SECONDS + 330 <= LIMIT)); then
        echo "RETRY   after a failure in the shared guest ($first); once more alone in a new guest"
        SCX_TICK_SECOND_RUN=0 run_vm "$f" "$runner" "$mode"; rc=$?
        RERUN+=("$name: $first")
        [[ $rc -eq 0 ]] && RERUN_PASSED=$((RERUN_PASSED + 1))
      else
        rc=1
      fi; } > >(tee "$o") 2>&1
  elif [[ $runner == host ]]; then
    # held to the worst case the time budget assumes for it
    timeout 60 bash "$f" > >(tee "$o") 2>&1; rc=$?
    ((rc == 124)) && echo "FAIL: $name ran past 60 s, the worst case scripts/test.sh assumes for a host scenario" | tee -a "$o"
  else
    run_vm "$f" "$runner" "$mode" > >(tee "$o") 2>&1; rc=$?
  fi
  wait $! 2>/dev/null # tee has written everything
  # In CI a skip passes only when it is the platform's (the host kernel
  # has sched_ext, virtme-ng cannot do it): a missing tool, a guest
  # booted the wrong way or a CPU that cannot go offline is a failure.
  if [[ $rc -eq 77 && ${CI:-} == true ]] && ! grep -q "^SKIP (platform): " "$o"; then
    echo "FAIL: skipped in CI, and not for the platform: $(grep -m1 '^SKIP' "$o")" | tee -a "$o"
    rc=1
  fi
  # a record that cannot be written fails the scenario
  keep_record "$name" "$rc" $((SECONDS - t)) "$o" "$RECORDS" "$COMMIT" || rc=1
  record "$name" "$rc" $((SECONDS - t))
  # the summary repeats why each failed, where CI shows the end of the log
  [[ $rc -ne 0 && $rc -ne 77 ]] && FAIL_LINES+=("$name: $(grep '^FAIL' "$o" | tail -1 | cut -c1-300)")
  rm -f "$o"
done

echo
[[ ${#NOT_RUN[@]} -gt 0 ]] && echo "not run, their worst case would end past the suite's ${LIMIT} s: ${NOT_RUN[*]}"
[[ ${#RETRIED[@]} -gt 0 ]] && echo "retried after an emulator fault (int3 oops, boot hang, silence after boot, QEMU assertion or a stalled SCHED_FIFO control): ${RETRIED[*]} ($RETRIED_PASSED passed on the retry)"
[[ ${#RERUN[@]} -gt 0 ]] && printf 'run again after a failure (%s passed the second run):\n' "$RERUN_PASSED" && printf '  %s\n' "${RERUN[@]}"
[[ ${#FAILURES[@]} -gt 0 ]] && echo "failed: ${FAILURES[*]}"
[[ ${#FAIL_LINES[@]} -gt 0 ]] && printf '  %s\n' "${FAIL_LINES[@]}"
echo "scenarios: $PASSED passed ($VNG_PASSED of them under virtme-ng, $RETRIED_PASSED on a retry after an emulator fault, $RERUN_PASSED on a second run after a failure), $FAILED failed, $SKIPPED skipped, ${#NOT_RUN[@]} not run (time limit) in $SECONDS s"
echo "records: $RECORDS"
echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
