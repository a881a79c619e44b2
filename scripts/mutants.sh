#!/usr/bin/env bash
# Proof that the suite catches a broken scheduler: build scx_tick with each
# test-only breakage (bpf/breakages.h) and run the VM scenarios that must
# catch it; print a markdown table (docs/testing.md keeps the last one).
# Not part of scripts/test.sh (about 30 minutes); rebuilds the normal
# scx_tick at the end, also when interrupted.
#
#   scripts/mutants.sh              every breakage
#   scripts/mutants.sh nomiss fifo  only these
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh

# breakage -> the scenarios that must fail with it (the one named after the
# feature first)
declare -A MUST=(
  [fifo]="vm/deadline_hints_order_ticks"
  [nosteal]="vm/steals_only_past_threshold vm/stolen_runner_stays_at_new_home vm/bpf_decisions_match_the_model"
  [steal-early]="vm/steals_only_past_threshold vm/bpf_decisions_match_the_model"
  [nolend]="vm/mid_tick_lending"
  [nomiss]="vm/stats_match_the_workload vm/stats_follow_the_period_grid"
  [stall]="vm/never_stalls_pinned_tasks"
  [selfkick]="vm/overload_causes_no_dispatch_storm"
  [noparked]="vm/bpf_decisions_match_the_model"
  [hometurn]="vm/bpf_decisions_match_the_model"
  [nicestall]="vm/niced_work_is_not_starved"
  [nospill]="vm/heavy_runners_use_idle_cpus vm/non_tick_cpu_takes_late_runner"
  [waketicks]="vm/stats_follow_the_period_grid vm/bpf_decisions_match_the_model"
  [notickreplenish]="vm/stats_follow_the_period_grid"
  [threadticks]="vm/stats_follow_the_period_grid"
  [noinherit]="vm/helpers_inherit_the_tick_deadline"
  [nodemote]="vm/overloaded_server_spares_its_neighbour"
  [nosteps]="vm/stats_follow_the_period_grid"
)
ORDER=(fifo nosteal steal-early nolend nomiss stall selfkick noparked hometurn nicestall nospill
  waketicks notickreplenish threadticks noinherit nodemote nosteps)
[[ $# -gt 0 ]] && ORDER=("$@")
for b in "${ORDER[@]}"; do [[ -n "${MUST[$b]:-}" ]] || die "unknown breakage $b (allowed: ${!MUST[*]})"; done

build() { cargo build --release --locked --workspace -q >/tmp/scx_tick-mutant-build.log 2>&1 || { tail -20 /tmp/scx_tick-mutant-build.log; return 1; }; }
trap 'log "rebuilding the normal scx_tick"; unset SCX_TICK_BREAK; build' EXIT

ROWS=()
for b in "${ORDER[@]}"; do
  log "breakage $b: building"
  SCX_TICK_BREAK=$b build || die "build with SCX_TICK_BREAK=$b failed"
  failed=() missed=()
  for s in ${MUST[$b]}; do
    log "breakage $b: $s"
    if bash scripts/test.sh --no-setup "$s" >"/tmp/scx_tick-mutant-$b-${s//\//_}.log" 2>&1; then
      missed+=("$s")
    else
      failed+=("$s")
    fi
  done
  ROWS+=("| \`$b\` | ${failed[*]:-none} | ${missed[*]:-none} |")
  log "breakage $b: caught by ${failed[*]:-nothing}; missed by ${missed[*]:-none}"
done

echo
echo "| breakage (SCX_TICK_BREAK) | scenarios that failed (caught it) | scenarios that should have and passed |"
echo "|---|---|---|"
printf '%s\n' "${ROWS[@]}"
