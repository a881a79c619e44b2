#!/usr/bin/env bash
# Proof that the suite catches a broken scheduler: build scx_tick with each
# test-only breakage (bpf/breakages.h) and run the VM scenarios that must
# catch it; print a markdown table (docs/testing.md keeps the last one).
# Not part of scripts/test.sh (about 30 minutes); rebuilds the normal
# scx_tick at the end, also when interrupted.
#
#   scripts/mutants.sh              every breakage a scenario catches
#   scripts/mutants.sh nomiss fifo  only these
#   scripts/mutants.sh --list       each breakage and its scenarios; builds nothing
#
# The breakages are bpf/breakages.h's, in its order; the scenarios that must
# fail with one name it in a "# Catches: NAME..." line of their header.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh

# The breakages, from their one declaration (#define SCX_TICK_BREAK_X 0 /* name: ... */).
mapfile -t ALL < <(sed -n 's|^#define SCX_TICK_BREAK_[A-Z_]* 0 /\* \([a-z-]*\): .*|\1|p' bpf/breakages.h)
((${#ALL[@]})) || die "no breakage found in bpf/breakages.h"
known() { [[ " ${ALL[*]} " == *" $1 "* ]]; }
# breakage -> the scenarios that must fail with it, in file name order
declare -A MUST=()
while IFS=: read -r f line; do
  s=${f#tests/} && s=${s%.sh}
  for b in ${line#"# Catches:"}; do
    known "$b" || die "$f: catches $b, not a breakage of bpf/breakages.h (${ALL[*]})"
    MUST[$b]+="${MUST[$b]:+ }$s"
  done
done < <(grep -H '^# Catches:' tests/*/*.sh | LC_ALL=C sort)
if [[ "${1:-}" == --list ]]; then
  for b in "${ALL[@]}"; do echo "$b: ${MUST[$b]:-none}"; done
  exit 0
fi
ORDER=()
for b in "${ALL[@]}"; do
  if [[ -n "${MUST[$b]:-}" ]]; then ORDER+=("$b"); elif [[ $# -eq 0 ]]; then log "breakage $b: no scenario catches it, not run"; fi
done
[[ $# -gt 0 ]] && ORDER=("$@")
for b in "${ORDER[@]}"; do
  known "$b" || die "unknown breakage $b (allowed: ${ALL[*]})"
  [[ -n "${MUST[$b]:-}" ]] || die "no scenario catches $b (none has a \"# Catches: $b\" line)"
done

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
