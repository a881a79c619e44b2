#!/usr/bin/env bash
# The benchmark: the same tick workload under every scheduler a user could
# pick instead of scx_tick, side by side in ONE guest per vCPU count, beside
# a fixed background load (stress-ng CPU hogs + a hackbench fork/pipe storm):
# EEVDF, SCHED_FIFO, SCHED_DEADLINE, scx_bpfland, scx_flash, scx_lavd,
# scx_tick with work stealing on/off x mid-tick lending on/off, scx_tick with
# deadline hints (tickload --hint), scx_tick --userspace and scx_tick with
# half the physical cores as tick CPUs (-halfcores, the default until
# 2026-11-25). Besides this
# standard scenario, two heavy ones where the runners ask for more than the
# tick CPUs can give, on an idle machine and beside CPU hogs.
#
#   scripts/bench.sh [--quick] [--cpus LIST] [--scenarios LIST] [--repeat N]
#                    [--runners LIST] [--seconds S] [--schedulers LIST]
#                    [--variant NAME=ARGS]... [--out DIR] [--no-peers]
#                    [--overloaded-blocks N]
#
#   --cpus 2,4,8      one guest per vCPU count (default 2,4,8; --quick: 4)
#   --scenarios LIST  subset of (default all; --quick: standard):
#                     standard    the tick workload at each runner count beside
#                                 2 x vCPUs CPU hogs and a hackbench storm
#                     heavy-idle  3T runners x 20 ms per 50 ms, no background
#                     heavy-hogs  the same beside 2 x vCPUs CPU hogs; with
#                                 eevdf also the floor: beside one hog
#                     capacity    runners x 12 ms per 50 ms beside 2 x vCPUs
#                                 CPU hogs, counted upward from 1.5 x vCPUs
#                                 until misses pass 5 %, in --repeat rounds:
#                                 each scheduler's capacity (DIR/results.md,
#                                 DIR/capacity-NvCPU.png)
#                     isolation   a well-behaved server (vCPUs runners x 12 ms)
#                                 beside vCPUs CPU hogs, alone and beside an
#                                 overloaded server in its own tick group
#                     real        four real game servers (Debian's
#                                 minetest-server, 12 ms of work per 50 ms
#                                 step) beside 2 x vCPUs CPU hogs, their own
#                                 late steps; the idle machine, eevdf, fifo,
#                                 scx_tick and the peers of --schedulers,
#                                 in --repeat rounds (DIR/real.md)
#                     real-sim    the same for two real simulation servers
#                                 (Debian's openttd, a 2048 x 2048 map, 30 ms
#                                 ticks), their own late and lost ticks
#                                 (DIR/real.md)
#   --repeat N        runs of each headline and heavy cell, in N rounds that
#                     each load every scheduler in turn (default 3; --quick:
#                     1); the other runner counts run once
#   --runners LIST    standard scenario's runner counts (default: 1,T,2T,4T
#                     with T = half the guest's physical cores;
#                     --quick: 2T); the headline is 2T (or the middle count)
#   --seconds S       length of each run (default 8; --quick: 5)
#   --schedulers LIST subset of (comma-separated; default all, in this
#                     order; the list: scripts/bench-schedulers): eevdf fifo
#                     deadline scx_bpfland scx_flash scx_lavd scx_tick
#                     scx_tick-nosteal scx_tick-nomidtick
#                     scx_tick-nosteal-nomidtick scx_tick-hints
#                     scx_tick-userspace scx_tick-halfcores
#   --variant NAME=ARGS  (real and real-sim only) one more scx_tick cell in
#                     every round, named NAME (scx_tick_ then lowercase
#                     letters, digits, _), run with scx_tick's extra
#                     arguments ARGS, or another build first with
#                     --bin PATH (e.g. scx_tick_t1=--steal-threshold-ms 1,
#                     scx_tick_old=--bin /tmp/old/scx_tick): an A/B in one
#                     guest, the rounds alternating the order
#   --out DIR         results folder (default results/bench-DATE); runs add to
#                     it, the report is rebuilt from everything in it
#   --no-peers        do not install missing peers (those are then skipped)
#   --overloaded-blocks N  (isolation) the overloaded server's runners block
#                     N times a tick for 1 ms (tickload --blocks: a lag
#                     machine that waits on a lock now and then; default 0)
#
# The host half (this script) sets up, boots the guests and writes the
# report; scripts/guest/bench.sh runs the scenarios inside each guest.
#
# Writes DIR/results.md (tables, the targets check), DIR/lateness-NvCPU.png,
# DIR/lateness-heavy-*-NvCPU.png, DIR/scaling-NvCPU.png, DIR/runs-NvCPU.jsonl
# (one record per run) and the raw guest logs. Under software emulation (TCG) compare only the
# ratios to EEVDF from the same run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh"
source "$ROOT/scripts/bench-scenarios.sh"

CPUS_LIST="" RUNNERS="" SECS="" SCHEDS="" OUT="" QUICK=0 NO_PEERS=0
SCENARIOS="" REPEAT="" VARIANTS=() OVERLOADED_BLOCKS=0
ORIG_ARGS=("$@")
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) QUICK=1; shift ;;
    --cpus) CPUS_LIST=$2; shift 2 ;;
    --scenarios) SCENARIOS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --runners) RUNNERS=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --schedulers) SCHEDS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --no-peers) NO_PEERS=1; shift ;;
    --variant) VARIANTS+=("$2"); shift 2 ;;
    --overloaded-blocks) OVERLOADED_BLOCKS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^# The host half/p' "$0" | sed '$d'; exit 0 ;; # the options, whole
    *) die "bench.sh: unknown option $1 (see scripts/bench.sh --help)" ;;
  esac
done
if [[ $QUICK -eq 1 ]]; then
  CPUS_LIST=${CPUS_LIST:-4} SECS=${SECS:-5} RUNNERS=${RUNNERS:-headline}
  SCENARIOS=${SCENARIOS:-standard} REPEAT=${REPEAT:-1}
fi
CPUS_LIST=${CPUS_LIST:-2,4,8} SECS=${SECS:-8} RUNNERS=${RUNNERS:-auto} REPEAT=${REPEAT:-3}
SCENARIOS=${SCENARIOS:-$(IFS=,; echo "${ALL_SCENARIOS[*]}")}
IFS=, read -ra SCENARIO_LIST <<<"$SCENARIOS"
for sc in "${SCENARIO_LIST[@]}"; do
  [[ " ${ALL_SCENARIOS[*]} " == *" $sc "* ]] || die "bench.sh: unknown scenario $sc (allowed: ${ALL_SCENARIOS[*]})"
done
[[ "$REPEAT" =~ ^[0-9]+$ && $REPEAT -ge 1 ]] || die "bench.sh: --repeat must be a whole number of at least 1"
SCHEDS=${SCHEDS:-$(IFS=,; echo "${ALL_SCHEDS[*]}")}
IFS=, read -ra SCHED_LIST <<<"$SCHEDS"
for s in "${SCHED_LIST[@]}"; do
  [[ " ${ALL_SCHEDS[*]} " == *" $s "* ]] || die "bench.sh: unknown scheduler $s (allowed: ${ALL_SCHEDS[*]})"
done
[[ "$SECS" =~ ^[0-9]+$ && $SECS -ge 3 ]] || die "bench.sh: --seconds must be a whole number of at least 3"
[[ "$OVERLOADED_BLOCKS" =~ ^[0-9]+$ && $OVERLOADED_BLOCKS -le 100 ]] \
  || die "bench.sh: --overloaded-blocks must be a whole number from 0 to 100"
overloaded_blocks "$OVERLOADED_BLOCKS"
# --variant: checked here, before any guest boots; the real families'
# guests get them as NAME=ARGS;NAME=ARGS (scripts/guest/bench-real.sh)
VARIANT_NAMES=()
for v in "${VARIANTS[@]}"; do
  [[ "$v" =~ ^(scx_tick_[a-z0-9_]+)=([^\;]*)$ ]] \
    || die "bench.sh: --variant $v: NAME=ARGS, NAME scx_tick_ then lowercase letters, digits or _, ARGS without ;"
  [[ " ${ALL_SCHEDS[*]} ${VARIANT_NAMES[*]} " == *" ${BASH_REMATCH[1]} "* ]] \
    && die "bench.sh: --variant ${BASH_REMATCH[1]}: the name is taken"
  read -ra a <<<"${BASH_REMATCH[2]}"
  if [[ "${a[0]:-}" == --bin ]]; then
    [[ -x "${a[1]:-}" ]] || die "bench.sh: --variant $v: --bin ${a[1]:-}: no executable there"
  fi
  VARIANT_NAMES+=("${BASH_REMATCH[1]}")
done
if ((${#VARIANTS[@]} > 0)) && [[ ",$SCENARIOS," != *,real,* && ",$SCENARIOS," != *,real-sim,* ]]; then
  die "bench.sh: --variant applies to the real and real-sim scenarios only"
fi

BIN="$ROOT/target/release"

bash "$ROOT/scripts/setup.sh"
SUDO=""
[[ $EUID -ne 0 ]] && SUDO="sudo"

# The PNG plots need a TrueType font.
if ! dpkg-query -W -f='${Status}' fonts-dejavu-core 2>/dev/null | grep -q "install ok installed"; then
  log "installing fonts-dejavu-core (for the plots)"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends fonts-dejavu-core \
    >/tmp/scx_tick-apt.log 2>&1 || log "could not install fonts-dejavu-core: the report will have no plots"
fi

OUT=${OUT:-$ROOT/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# Peers from the registry, installed once into the cache; a peer that does
# not install is skipped (the guest records why), the bench goes on.
for p in "${PEERS[@]}"; do
  [[ " ${SCHED_LIST[*]} " == *" $p "* ]] || continue
  [[ -x "$PEER_DIR/bin/$p" ]] && continue
  if [[ $NO_PEERS -eq 1 ]]; then log "$p is not installed (--no-peers): it will be skipped"; continue; fi
  log "cargo install --locked $p (once; a few minutes)"
  if ! CARGO_TARGET_DIR="$PEER_DIR/target" cargo install --locked --root "$PEER_DIR" "$p" >"$OUT/peers-$p.log" 2>&1; then
    log "$p did not install (it will be skipped): $(grep -m1 -E '^error' "$OUT/peers-$p.log" || tail -1 "$OUT/peers-$p.log")"
  fi
done

# What ran where: appended per invocation, so a folder filled by several
# invocations (one per vCPU count) says so.
{
  echo "- \`scripts/bench.sh ${ORIG_ARGS[*]}\` on $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (uncommitted changes)')"
} >>"$OUT/commands.md"
peer_versions=""
for p in "${PEERS[@]}"; do
  [[ -x "$PEER_DIR/bin/$p" ]] && peer_versions+=" $p $("$PEER_DIR/bin/$p" --version 2>/dev/null | head -1 | awk '{print $2}'),"
done
accel=tcg
[[ "${SCX_TICK_ACCEL:-}" == kvm || "$(cat "$CACHE_DIR/vm/kvm-works" 2>/dev/null)" == yes ]] && accel=kvm
cat >"$OUT/meta.md" <<META
# scx_tick benchmark

Commands:

$(cat "$OUT/commands.md")

Host: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs ($(lscpu | sed -n 's/^Thread(s) per core: *//p') thread(s) per core), $(free -g | awk '/^Mem:/{print $2}') GiB RAM, $(uname -sr).
Guest: QEMU $(qemu-system-x86_64 --version | head -1 | awk '{print $4}') with ${accel^^}$([[ $accel == tcg ]] && echo " (software emulation)"), kernel $(readlink "$KERNEL_CACHE/current"), peers:${peer_versions%,}.

Scenarios (T = half the guest's physical cores, scx_tick's default tick CPU count until 2026-11-25; runners in the cgroup \`tick\`,
scx_tick: \`--tick-cgroup tick\`; $SECS s per run; the headline and heavy cells run $REPEAT time(s),
in $REPEAT round(s) that each load every scheduler in turn; the other runner counts once):

- standard: \`tickload -n RUNNERS ${TICK_ARGS[*]}\` at each runner count (1, T, 2T, 4T
  unless \`--runners\`; headline 2T) beside \`stress-ng --cpu $HOGS_PER_CPU×vCPUs\` (bogo-ops/s =
  background throughput) and \`hackbench -p -g 2 -f 5 -l 50\` back to back (runs/s). In the
  headline run \`cyclictest -q -i 1000\` runs inside the tick cgroup (SCHED_FIFO 50 in the fifo
  row, else SCHED_OTHER).
- heavy-idle: \`tickload -n ${HEAVY_PER_T}T ${HEAVY_ARGS[*]}\` (1.2 x T CPUs: scx_tick-halfcores must spill over) and nothing else.
- heavy-hogs: the same runners beside \`stress-ng --cpu $HOGS_PER_CPU×vCPUs\`; with eevdf also the
  floor (heavy-floor): the same runners beside \`stress-ng --cpu 1\`.
- capacity: \`tickload -n N ${CAP_ARGS[*]}\` beside \`stress-ng --cpu $HOGS_PER_CPU×vCPUs\`, N counted
  upward ($(capacity_counts 4 | tr '\n' ' ')at 4 vCPUs) in each round until misses pass $CAP_STOP_PCT % (held: at most $CAP_HELD_PCT %);
  SCHED_DEADLINE runtime $CAP_DL_RUNTIME_MS ms (counts past the kernel's admission limit fail).
- isolation: \`tickload -n vCPUs ${CAP_ARGS[*]}\` beside \`stress-ng --cpu vCPUs\`, alone, then beside
  \`tickload -n 3/4×vCPUs ${OVERLOADED_ARGS[*]}\` in the cgroup \`overloaded\` (scx_tick:
  \`--tick-cgroup overloaded\` too), its runners under the row's policy.

fifo: runners SCHED_FIFO 50; deadline: SCHED_DEADLINE, runtime $DL_RUNTIME_MS ms in standard (1.6 x the
regular work's maximum: under TCG the kernel charges 1-3 ms per tick beyond the work, and 1.1 x
throttled 16% of ticks in an idle guest), $HEAVY_DL_RUNTIME_MS ms in the heavy scenarios (1.5 x: more would exceed
the kernel's admission limit), deadline = period = 50 ms (spikes overrun it and are throttled).
scx_tick-halfcores: \`--tick-cpus T\`, the old default (scx_tick now takes every core but CPU 0's). BPF cost: struct_ops programs'
run_time_ns/run_cnt with \`kernel.bpf_stats_enabled\`.
META

# All schedulers in one guest with $1 vCPUs. A TCG guest can stop making
# progress (seen: SCHED_DEADLINE runners hogging a vCPU with RCU stalls on
# the console; an 8-vCPU boot stuck in delay calibration); a watchdog then
# ends it. A guest that never started its first scheduler is booted again
# (twice at most); otherwise the scheduler it was in is recorded as skipped
# and the remaining ones run in a fresh guest.
run_guests() {
  local v=$1 todo=("${SCHED_LIST[@]}") log="$OUT/guest-$1vcpu.log" raw="$OUT/runs-$1vcpu.out"
  local stall=$((SECS + 300)) boot_stall=180 boots_failed=0
  local vm rc size last_size quiet s done_list last_run t offset attempt current
  local counts cells=0 sc last_n last_sc last_rep
  : >"$log"; : >"$raw"
  # runs per scheduler, an upper bound (the runner counts are decided in the guest)
  case "$RUNNERS" in
    auto) counts=4 ;;
    headline) counts=1 ;;
    *) counts=$(tr ',' '\n' <<<"$RUNNERS" | sort -nu | wc -l) ;;
  esac
  for sc in "${SCENARIO_LIST[@]}"; do
    case "$sc" in
      standard) cells=$((cells + counts - 1 + REPEAT)) ;;
      heavy-idle) cells=$((cells + REPEAT)) ;;
      heavy-hogs) cells=$((cells + 2 * REPEAT)) ;; # with eevdf's floor
      capacity) cells=$((cells + 6 * REPEAT)) ;;
      isolation) cells=$((cells + 2 * REPEAT)) ;;
    esac
  done
  while ((${#todo[@]} > 0)); do
    offset=$(stat -c %s "$log")
    # generous: every scheduler's runs, load and unload
    local timeout=$((${#todo[@]} * (cells * (SECS + 15) + 60 * REPEAT) + 180))
    log "guest with $v vCPUs: ${todo[*]} (up to $timeout s)"
    bash "$ROOT/scripts/vm.sh" --cpus "$v" --timeout "$timeout" --env "SCX_TICK_CACHE=$CACHE_DIR" -- \
      bash "$ROOT/scripts/guest/bench.sh" --vcpus "$v" --runners "$RUNNERS" --seconds "$SECS" \
      --scenarios "$SCENARIOS" --repeat "$REPEAT" --overloaded-blocks "$OVERLOADED_BLOCKS" \
      --schedulers "$(IFS=,; echo "${todo[*]}")" >>"$raw" 2> >(tee -a "$log" >&2) &
    vm=$!
    last_size=-1 quiet=0
    while kill -0 "$vm" 2>/dev/null; do
      sleep 5
      size=$(stat -c %s "$log")
      if [[ $size -eq $last_size ]]; then quiet=$((quiet + 5)); else quiet=0 last_size=$size; fi
      attempt=$(tail -c +$((offset + 1)) "$log")
      if ((quiet >= stall)) || { [[ "$attempt" != *"[bench] start "* ]] && ((quiet >= boot_stall)); }; then
        log "the $v-vCPU guest printed nothing for $quiet s: ending it"
        kill -TERM "$vm" 2>/dev/null || true
        break
      fi
    done
    rc=0; wait "$vm" || rc=$?
    attempt=$(tail -c +$((offset + 1)) "$log")
    done_list=" $(sed -n 's/^\[bench\] finished //p' "$log" | tr '\n' ' ') "
    local rest=()
    for s in "${todo[@]}"; do [[ "$done_list" == *" $s "* ]] || rest+=("$s"); done
    todo=("${rest[@]}")
    ((${#todo[@]} > 0)) || break
    current=$(sed -n 's/^\[bench\] start //p' <<<"$attempt" | tail -1)
    if [[ -z "$current" ]]; then
      boots_failed=$((boots_failed + 1))
      if ((boots_failed <= 2)); then
        log "the $v-vCPU guest (status $rc) never started a scheduler: booting it again"
        continue
      fi
      log "the $v-vCPU guest failed to start three times: giving up on ${todo[*]}"
      for s in "${todo[@]}"; do
        "$BIN/benchreport" record --vcpus "$v" --tick-cpus 0 --scheduler "$s" --runners 0 \
          --duration-s "$SECS" --skipped "the $v-vCPU guest did not boot (three tries)" >>"$raw"
      done
      break
    fi
    # the scheduler the guest was in when it stopped: skip it
    s=$current
    # "[bench] run SCHED RUNNERS SCENARIO REP"
    last_run=$(sed -n "s/^\[bench\] run $s //p" <<<"$attempt" | tail -1)
    read -r last_n last_sc last_rep <<<"${last_run:-0 standard 0}"
    t=$(sed -n 's/.*, T \([0-9]*\), scenarios.*/\1/p' "$log" | tail -1)
    log "the $v-vCPU guest ended (status $rc) during $s${last_run:+ in $last_sc run $last_rep with $last_n runners}; going on without it"
    "$BIN/benchreport" record --vcpus "$v" --t "${t:-0}" --scheduler "$s" \
      --scenario "$last_sc" --rep "$last_rep" --runners "$last_n" --duration-s "$SECS" \
      --skipped "the guest stopped (status $rc, no output for ${quiet} s) during the $last_sc ${last_n}-runner run #$last_rep; the schedulers after it ran in a fresh guest" >>"$raw"
    rest=()
    for s in "${todo[@]}"; do [[ "$s" == "$current" ]] || rest+=("$s"); done
    todo=("${rest[@]}")
    # the rounds interleave the schedulers: those not finished run again from
    # their first round in the fresh guest, so their runs so far are dropped
    for s in "${todo[@]}"; do
      grep -vF "\"scheduler\":\"$s\"" "$raw" >"$raw.keep" || true
      mv "$raw.keep" "$raw"
    done
  done
  grep '^{' "$raw" >"$OUT/runs-${v}vcpu.jsonl" || true
  rm -f "$raw"
}

# The real-server families: one guest per family and vCPU count, its own
# records (DIR/SCENARIO-NvCPU.jsonl) and one table (DIR/real.md).
run_real() { # VCPUS SCENARIO
  local v=$1 sc=$2 server=minetest list=() s
  [[ $sc == real-sim ]] && server=openttd
  for s in "${SCHED_LIST[@]}"; do [[ " ${REAL_SCHEDS[*]} " == *" $s "* ]] && list+=("$s"); done
  list+=("${VARIANT_NAMES[@]}")
  ((${#list[@]} > 0)) || { log "$sc: none of --schedulers has a real-server cell"; return 0; }
  log "guest with $v vCPUs: real servers ($server), ${list[*]}"
  bash "$ROOT/scripts/vm.sh" --cpus "$v" --timeout $((REPEAT * (${#list[@]} + 1) * (SECS + 60) + 900)) \
    --env "SCX_TICK_CACHE=$CACHE_DIR" --env "SCX_TICK_BENCH_VARIANTS=$(IFS=';'; echo "${VARIANTS[*]}")" -- \
    bash "$ROOT/scripts/guest/bench-real.sh" --server "$server" --vcpus "$v" --seconds "$SECS" --repeat "$REPEAT" \
    --schedulers "$(IFS=,; echo "${list[*]}")" 2> >(tee -a "$OUT/guest-$sc-${v}vcpu.log" >&2) \
    | grep '^{' >>"$OUT/$sc-${v}vcpu.jsonl" || log "the $sc guest with $v vCPUs failed (see guest-$sc-${v}vcpu.log)"
}

IFS=, read -ra CPU_COUNTS <<<"$CPUS_LIST"
# real runs in its own guest; the tick workload's scenarios in run_guests
REAL_SCENARIOS=() OTHER_SCENARIOS=()
for sc in "${SCENARIO_LIST[@]}"; do
  if [[ $sc == real || $sc == real-sim ]]; then REAL_SCENARIOS+=("$sc"); else OTHER_SCENARIOS+=("$sc"); fi
done
SCENARIO_LIST=("${OTHER_SCENARIOS[@]}")
SCENARIOS=$(IFS=,; echo "${OTHER_SCENARIOS[*]}")
for v in "${CPU_COUNTS[@]}"; do
  [[ "$v" =~ ^[0-9]+$ && $v -ge 2 ]] || die "bench.sh: --cpus takes vCPU counts of 2 or more"
  if ((${#OTHER_SCENARIOS[@]} > 0)); then run_guests "$v"; fi
  for sc in "${REAL_SCENARIOS[@]}"; do run_real "$v" "$sc"; done
done

if ((${#OTHER_SCENARIOS[@]} > 0)); then
  "$BIN/benchreport" report "$OUT"
  log "results: $OUT/results.md"
fi
if ((${#REAL_SCENARIOS[@]} > 0)); then
  python3 "$ROOT/scripts/real-report.py" "$OUT" >"$OUT/real.md"
  log "real servers: $OUT/real.md"
fi
