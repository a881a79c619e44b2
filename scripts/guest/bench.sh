#!/usr/bin/env bash
# The benchmark's guest half, run by scripts/bench.sh inside a sched_ext
# guest (scripts/vm.sh): --repeat rounds of every scheduler of --schedulers
# in turn, each through every scenario; one JSON record per run on stdout (benchreport
# record), progress on stderr (the host's watchdog reads it).
#
#   scripts/guest/bench.sh --vcpus N --runners auto|headline|LIST --seconds S
#                          --scenarios LIST --repeat N --schedulers LIST
#                          [--overloaded-blocks N]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"

VCPUS="" RUNNERS="" SECS="" SCENARIOS="" REPEAT="" SCHEDS=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --vcpus) VCPUS=$2; shift 2 ;;
    --runners) RUNNERS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --scenarios) SCENARIOS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --schedulers) SCHEDS=$2; shift 2 ;;
    --overloaded-blocks) overloaded_blocks "$2"; shift 2 ;;
    *) die "guest/bench.sh: unknown option $1 (it is run by scripts/bench.sh)" ;;
  esac
done
[[ -n "$VCPUS" && -n "$RUNNERS" && -n "$SECS" && -n "$SCENARIOS" && -n "$REPEAT" && -n "$SCHEDS" ]] \
  || die "guest/bench.sh: every option is needed (it is run by scripts/bench.sh)"
IFS=, read -ra SCENARIO_LIST <<<"$SCENARIOS"
IFS=, read -ra SCHED_LIST <<<"$SCHEDS"
BIN="$ROOT/target/release"

# One scheduler after another, in this one guest; every run prints its record
# (a JSON line) on stdout, everything else goes to stderr.
guest_main() {
  local cg=/sys/fs/cgroup/tick work t headline heavy runners=() s n sc
  work=$(mktemp -d /tmp/bench.XXXXXX)
  cd "$work" # stress-ng wants a writable working directory
  mkdir -p "$cg" "$OVERLOADED_CG"
  echo 1 >/proc/sys/kernel/bpf_stats_enabled
  # T: half the physical cores (scx_tick's default tick CPU count until
  # 2026-11-25), so every scenario keeps the size of the earlier records
  t=$("$BIN/scx_tick" topology --json | python3 -c \
    'import json,sys; m=json.load(sys.stdin)["machine"]; print(max(1, len({c["core"] for c in m["cpus"]}) // 2))')
  headline=$((2 * t))
  heavy=$((HEAVY_PER_T * t))
  case "$RUNNERS" in
    auto) runners=(1 "$t" "$headline" $((4 * t))) ;;
    headline) runners=("$headline") ;;
    *) IFS=, read -ra runners <<<"$RUNNERS"; headline=${runners[$(((${#runners[@]} - 1) / 2))]} ;;
  esac
  # (no process substitution here: the guest has no /dev/fd)
  read -ra runners <<<"$(printf '%s\n' "${runners[@]}" | sort -nu | tr '\n' ' ')"
  echo "[bench] guest: $VCPUS vCPUs, kernel $(uname -r), $(lscpu | sed -n 's/^Model name: *//p')," \
    "T $t, scenarios ${SCENARIO_LIST[*]}, runners ${runners[*]} (headline $headline," \
    "heavy $heavy), $REPEAT run(s) per headline/heavy cell, $SECS s per run" >&2

  # In rounds: each round loads every scheduler in turn and runs each of its
  # cells once (the scaling table's other runner counts in the first round
  # only), so a slow stretch of the emulated host hits every scheduler alike
  # instead of all the repetitions of one.
  local round skipped=" "
  for ((round = 0; round < REPEAT; round++)); do
    for s in "${SCHED_LIST[@]}"; do
      [[ "$skipped" == *" $s "* ]] && continue
      echo "[bench] start $s" >&2 # the host's watchdog reads these
      if ! start_sched "$s"; then
        echo "[bench] $s skipped: $SKIP_WHY" >&2
        "$BIN/benchreport" record --vcpus "$VCPUS" --t "$t" --scheduler "$s" \
          --runners "$headline" --headline --duration-s "$SECS" --skipped "$SKIP_WHY"
        skipped+="$s "
        echo "[bench] finished $s" >&2
        continue
      fi
      for sc in "${SCENARIO_LIST[@]}"; do
        case "$sc" in
          standard)
            for n in "${runners[@]}"; do
              if [[ $n -eq $headline ]]; then
                run_once "$s" standard "$n" "$round" 1 "$t" "$cg"
              elif ((round == 0)); then
                run_once "$s" standard "$n" 0 0 "$t" "$cg"
              fi
            done ;;
          heavy-idle|heavy-hogs)
            run_once "$s" "$sc" "$heavy" "$round" 0 "$t" "$cg"
            # the floor heavy-hogs is judged against: EEVDF beside a single hog
            if [[ $sc == heavy-hogs && $s == eevdf ]]; then
              run_once "$s" heavy-floor "$heavy" "$round" 0 "$t" "$cg"
            fi ;;
          capacity)
            for n in $(capacity_counts "$VCPUS"); do
              run_once "$s" capacity "$n" "$round" 0 "$t" "$cg"
              # on while at most CAP_STOP_PCT missed (a failed tickload ends it too)
              python3 -c 'import json,sys; sys.exit(json.load(open("tickload.json"))["total"]["miss_pct"] > float(sys.argv[1]))' \
                "$CAP_STOP_PCT" 2>/dev/null || break
            done ;;
          isolation)
            run_once "$s" isolation-alone "$VCPUS" "$round" 0 "$t" "$cg"
            run_once "$s" isolation-beside "$VCPUS" "$round" 0 "$t" "$cg" ;;
        esac
      done
      stop_sched
      if ((round == REPEAT - 1)); then echo "[bench] finished $s" >&2; fi
    done
  done
  rm -rf "$work"
}

SCHED_PID="" SKIP_WHY=""
# the isolation scenario's overloaded server: its own tick group
OVERLOADED_CG=/sys/fs/cgroup/overloaded

# Start scheduler $1 (nothing for the kernel's own policies). On failure
# set SKIP_WHY and return 1.
start_sched() {
  local s=$1 cmd=() i
  case "$s" in
    eevdf|fifo|deadline) return 0 ;;
    scx_tick) cmd=("$BIN/scx_tick" --tick-cgroup tick) ;;
    scx_tick-nosteal) cmd=("$BIN/scx_tick" --tick-cgroup tick --no-work-stealing) ;;
    scx_tick-nomidtick) cmd=("$BIN/scx_tick" --tick-cgroup tick --no-mid-tick) ;;
    scx_tick-nosteal-nomidtick) cmd=("$BIN/scx_tick" --tick-cgroup tick --no-work-stealing --no-mid-tick) ;;
    scx_tick-hints) cmd=("$BIN/scx_tick" --tick-cgroup tick) ;; # and tickload --hint
    scx_tick-userspace) cmd=("$BIN/scx_tick" --userspace --tick-cgroup tick) ;;
    scx_tick-halfcores) cmd=("$BIN/scx_tick" --tick-cgroup tick --tick-cpus "$t") ;;
    *)
      if [[ ! -x "$PEER_DIR/bin/$s" ]]; then
        SKIP_WHY="not installed (cargo install failed, see peers-$s.log, or --no-peers)"
        return 1
      fi
      cmd=("$PEER_DIR/bin/$s") ;;
  esac
  if [[ $s == scx_tick* && " ${SCENARIO_LIST[*]} " == *" isolation "* ]]; then
    cmd+=(--tick-cgroup overloaded)
  fi
  if [[ "$(sched_state)" != disabled ]]; then
    SKIP_WHY="another sched_ext scheduler is still enabled"
    return 1
  fi
  "${cmd[@]}" >"sched-$s.log" 2>&1 &
  SCHED_PID=$!
  if ! wait_sched_state enabled 120 "$SCHED_PID"; then
    kill -INT "$SCHED_PID" 2>/dev/null; wait "$SCHED_PID" 2>/dev/null || true
    SCHED_PID=""
    SKIP_WHY="did not load: $(grep -v '^\s*$' "sched-$s.log" | tail -3 | tr '\n' ' ' | cut -c1-300)"
    return 1
  fi
  echo "[bench] $s enabled: $(cat /sys/kernel/sched_ext/root/ops)" >&2
}

# One measured window of scenario $2: its background load + tickload (+
# cyclictest in the standard headline run) under the running scheduler;
# prints the record.
run_once() {
  local s=$1 sc=$2 n=$3 rep=$4 headline=$5 t=$6 cg=$7 policy=() cyc_pol=other scx=0
  local bg=() cyc_secs=$((SECS - 2 < 5 ? SECS - 2 : 5)) rec=()
  local tick_args=("${TICK_ARGS[@]}") dl_ms=$DL_RUNTIME_MS hogs=$((HOGS_PER_CPU * VCPUS)) storm=1
  case "$sc" in
    heavy-idle) tick_args=("${HEAVY_ARGS[@]}") dl_ms=$HEAVY_DL_RUNTIME_MS hogs=0 storm=0 ;;
    heavy-hogs) tick_args=("${HEAVY_ARGS[@]}") dl_ms=$HEAVY_DL_RUNTIME_MS storm=0 ;;
    heavy-floor) tick_args=("${HEAVY_ARGS[@]}") dl_ms=$HEAVY_DL_RUNTIME_MS hogs=1 storm=0 ;;
    capacity) tick_args=("${CAP_ARGS[@]}") dl_ms=$CAP_DL_RUNTIME_MS storm=0 ;;
    isolation-*) tick_args=("${CAP_ARGS[@]}") dl_ms=$CAP_DL_RUNTIME_MS hogs=$VCPUS storm=0 ;;
  esac
  case "$s" in
    fifo) policy=(--policy fifo --fifo-prio 50); cyc_pol=fifo ;;
    deadline) policy=(--policy deadline --dl-runtime-ms "$dl_ms") ;;
    scx_tick-hints) policy=(--hint); scx=1 ;;
    scx_*) scx=1 ;;
  esac
  echo "[bench] run $s $n $sc $rep" >&2 # the host's watchdog reads these
  rm -f stress.out hackbench.count cyclictest.out tickload.json overloaded.json bpf-*.json sched-*.stat
  if [[ $scx -eq 1 ]]; then
    bpftool -j prog show >bpf-before.json
    cat "/proc/$SCHED_PID/stat" >sched-before.stat 2>/dev/null || true
  fi
  if ((hogs > 0)); then
    stress-ng --cpu "$hogs" --timeout $((SECS + 2))s --metrics-brief \
      --temp-path "$PWD" >stress.out 2>&1 &
    bg+=($!)
  fi
  if ((storm)); then
    # the fork/pipe storm: hackbench runs back to back, counted
    (
      end=$((SECONDS + SECS + 1)) runs=0
      while ((SECONDS < end)); do
        hackbench -p -g 2 -f 5 -l 50 >/dev/null 2>&1 && runs=$((runs + 1))
      done
      echo "$runs" >hackbench.count
    ) &
    bg+=($!)
  fi
  if ((${#bg[@]} > 0)); then sleep 0.5; fi
  if [[ $headline -eq 1 ]]; then
    # a latency probe inside the tick group, with the tick runners' policy
    (
      sleep 1
      echo "$BASHPID" >"$cg/cgroup.procs"
      if [[ $cyc_pol == fifo ]]; then
        exec cyclictest -q -D "$cyc_secs" -i 1000 --policy fifo -p 50
      fi
      exec cyclictest -q -D "$cyc_secs" -i 1000
    ) >cyclictest.out 2>&1 &
    bg+=($!)
  fi
  local tl_rc=0 over=""
  if [[ $sc == isolation-beside ]]; then
    # the overloaded server, its runners under the same policy as the others
    timeout -k 5 $((SECS + 60)) "$BIN/tickload" -n "$(overloaded_runners "$VCPUS")" \
      "${OVERLOADED_ARGS[@]}" --duration-s "$SECS" --cgroup "$OVERLOADED_CG" "${policy[@]}" \
      --json >overloaded.json 2>overloaded.err &
    over=$!
  fi
  timeout -k 5 $((SECS + 60)) "$BIN/tickload" -n "$n" "${tick_args[@]}" --duration-s "$SECS" --cgroup "$cg" "${policy[@]}" \
    --json >tickload.json 2>tickload.err || tl_rc=$?
  if ((${#bg[@]} > 0)); then wait "${bg[@]}" 2>/dev/null || true; fi
  if [[ -n $over ]] && ! wait "$over"; then
    echo "[bench] $s, $sc: the overloaded server's tickload failed: $(tail -1 overloaded.err)" >&2
    rm -f overloaded.json
  fi
  if [[ $scx -eq 1 ]]; then
    bpftool -j prog show >bpf-after.json
    cat "/proc/$SCHED_PID/stat" >sched-after.stat 2>/dev/null || true
  fi
  rec=(--vcpus "$VCPUS" --t "$t" --scheduler "$s" --scenario "$sc" --rep "$rep"
    --runners "$n" --duration-s "$SECS")
  if [[ $headline -eq 1 ]]; then rec+=(--headline); fi
  if [[ $tl_rc -ne 0 ]]; then
    echo "[bench] $s, $sc, $n runners: tickload failed: $(tail -1 tickload.err)" >&2
    "$BIN/benchreport" record "${rec[@]}" --skipped "tickload failed: $(tail -1 tickload.err)"
    return 0
  fi
  rec+=(--tickload tickload.json)
  if ((hogs > 0)); then rec+=(--stress stress.out); fi
  if [[ -s overloaded.json ]]; then rec+=(--overloaded overloaded.json); fi
  if ((storm)); then rec+=(--hackbench-runs "$(cat hackbench.count 2>/dev/null || echo 0)"); fi
  if [[ $headline -eq 1 ]]; then rec+=(--cyclictest cyclictest.out --cyclictest-policy "$cyc_pol"); fi
  if [[ $scx -eq 1 ]]; then rec+=(--bpf-before bpf-before.json --bpf-after bpf-after.json); fi
  if [[ -s sched-before.stat && -s sched-after.stat ]]; then
    rec+=(--sched-stat-before sched-before.stat --sched-stat-after sched-after.stat)
  fi
  local want=disabled
  if [[ $scx -eq 1 ]]; then want=enabled; fi
  if [[ "$(sched_state)" != "$want" ]]; then
    echo "[bench] warning: $s: sched_ext state is $(sched_state) after the run (the scheduler exited?)" >&2
  fi
  python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["total"]; print(
    "[bench] %-26s %-11s #%s runners %2s: miss %6.2f%%  late p50 %7.2f p99 %7.2f ms  mspt p99 %7.2f ms" % (
    sys.argv[2], sys.argv[4], sys.argv[5], sys.argv[3], t["miss_pct"], t["lateness_p50_ms"],
    t["lateness_p99_ms"], t["mspt_p99_ms"]), file=sys.stderr)' \
    tickload.json "$s" "$n" "$sc" "$rep"
  "$BIN/benchreport" record "${rec[@]}"
}

guest_main
