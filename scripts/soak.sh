#!/usr/bin/env bash
# The long run (not part of scripts/test.sh): one guest, cycles of mixed load
# for at least 10 minutes (tests/soak/mixed_load.sh), then the figures:
# ticks, misses, faults injected, anomalies.
#
#   scripts/soak.sh [MINUTES]     default 10
#
# Its figures go into results/soak-DATE.jsonl as one record
# (SCX_TICK_RECORDS chooses the file), like a scenario's in scripts/test.sh.
#
# Needs a build (cargo build --release) and the guest kernel (scripts/setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh
MINUTES=${1:-10}
[[ "$MINUTES" =~ ^[0-9]+$ && "$MINUTES" -ge 1 ]] || die "soak.sh: MINUTES must be a whole number of minutes, 1 or more"
for b in scx_tick tickload threadchurn; do
  [[ -x target/release/$b ]] || die "target/release/$b is missing: run cargo build --release first"
done
secs=$((MINUTES * 60))
RECORDS=${SCX_TICK_RECORDS:-$ROOT/results/soak-$(date -u +%Y%m%d-%H%M%S).jsonl}
mkdir -p "$(dirname "$RECORDS")"
log "soak: $MINUTES minutes of mixed load in one 4-vCPU guest"
out=$(mktemp) start=$SECONDS
set +e
bash scripts/vm.sh --cpus 4 --timeout $((secs + 900)) --env SCX_TICK_SOAK_S=$secs -- bash tests/soak/mixed_load.sh \
  2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
keep_record "soak/mixed_load ($MINUTES min)" "$rc" $((SECONDS - start)) "$out" "$RECORDS" "$(commit_id)"
rm -f "$out"
log "record: $RECORDS"
exit "$rc"
