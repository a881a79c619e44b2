#!/usr/bin/env bash
# Coverage-guided fuzzing of the configuration parser (the file and the
# command line) and the hints protocol (both sides' lines): the targets in
# fuzz/, libFuzzer through the libfuzzer-sys crate, built on stable Rust
# with the coverage instrumentation cargo-fuzz asks nightly for.
#
#   scripts/fuzz.sh [--seconds N] [TARGET...]  each target N s (default 20)
#                                              from its corpus, fuzz/corpus/
#   scripts/fuzz.sh --merge ...                then add the inputs that reach
#                                              new code to fuzz/corpus/
#                                              (minimized; commit them)
#   scripts/fuzz.sh --record FILE ...          append the run's record to
#                                              FILE (JSON lines, as the
#                                              suite's: records/tests/ keeps
#                                              the ones docs quote)
#   scripts/fuzz.sh --list                     the targets
#
# A crash (a panic, a failed check, an abort, an input that runs 10 s)
# fails the run; its input is left in results/fuzz/ and printed, to be
# replayed with `fuzz/target/$TRIPLE/release/TARGET FILE`. Without --merge
# the committed corpus is only read: what a run finds goes to a temporary
# directory. `cargo test` replays the committed corpus on every run.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh

SECS=20 MERGE=0 TARGETS=() RECORD=""
ALL=(config_file command_line hints_request hints_reply)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECS=${2:?--seconds needs a number}; shift ;;
    --merge) MERGE=1 ;;
    --record) RECORD=${2:?--record needs a file}; shift ;;
    --list) printf '%s\n' "${ALL[@]}"; exit 0 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) die "unknown option $1 (--seconds N, --merge, --record FILE, --list)" ;;
    *) [[ " ${ALL[*]} " == *" $1 "* ]] || die "no fuzz target $1: the targets are ${ALL[*]}"
       TARGETS+=("$1") ;;
  esac
  shift
done
[[ "$SECS" =~ ^[1-9][0-9]*$ ]] || die "--seconds $SECS: a whole number of seconds, at least 1"
[[ ${#TARGETS[@]} -eq 0 ]] && TARGETS=("${ALL[@]}")
if [[ -n $RECORD ]]; then
  # the run once more, as parsed, without --record: its output kept as
  # the record's figures (scripts/reliability-figures.py reads "fuzz")
  o=$(mktemp) t=$SECONDS commit=$(commit_id)
  merge=()
  ((MERGE)) && merge=(--merge)
  bash "$0" --seconds "$SECS" "${merge[@]}" "${TARGETS[@]}" 2>&1 | tee "$o"
  rc=${PIPESTATUS[0]}
  keep_record fuzz "$rc" $((SECONDS - t)) "$o" "$RECORD" "$commit" || rc=1
  rm -f "$o"
  exit "$rc"
fi

# cargo-fuzz's instrumentation, spelled for stable rustc: sancov's module
# pass with inline 8-bit counters, the PC table and comparison tracing,
# which libFuzzer reads; --cfg fuzzing as cargo-fuzz sets it. An explicit
# --target keeps these flags off the build scripts and proc macros.
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4
  -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
  -Cllvm-args=-sanitizer-coverage-pc-table
  -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
RUSTFLAGS=$(echo $RUSTFLAGS)
log "building the fuzz targets (fuzz/target)"
cargo build --release --locked --quiet --manifest-path fuzz/Cargo.toml --target "$TRIPLE" \
  || die "the fuzz targets did not build"

OUT=$ROOT/results/fuzz
mkdir -p "$OUT"
failed=()
for t in "${TARGETS[@]}"; do
  bin=fuzz/target/$TRIPLE/release/$t corpus=fuzz/corpus/$t new=$(mktemp -d)
  mkdir -p "$corpus"
  log "fuzzing $t for $SECS s from $(ls "$corpus" | wc -l) corpus inputs"
  # the first directory receives what the run finds; the corpus is read
  "$bin" -max_total_time="$SECS" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$OUT/$t-" "$new" "$corpus" >"$OUT/$t.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$OUT/$t.log")
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$OUT/$t.log" | tail -1)
  if [[ $rc -ne 0 ]]; then
    crash=$(grep -o "Test unit written to .*" "$OUT/$t.log" | sed 's/Test unit written to //' | tail -1)
    grep -E "panicked|^==.*ERROR|SUMMARY" "$OUT/$t.log" | head -5
    echo "FAIL: fuzz target $t crashed (exit $rc) on ${crash:-an input}: $(python3 -c 'import sys; print(repr(open(sys.argv[1], "rb").read()[:200]))' "${crash:-/dev/null}")"
    failed+=("$t")
  fi
  echo "# fuzz $t: ${runs:-?} inputs in $SECS s, ${cov:-no coverage line}, $(ls "$new" | wc -l) new inputs over a corpus of $(ls "$corpus" | wc -l)"
  if [[ $MERGE -eq 1 && $rc -eq 0 ]]; then
    "$bin" -set_cover_merge=1 "$corpus" "$new" >"$OUT/$t-merge.log" 2>&1 || die "merging $t's finds (see $OUT/$t-merge.log)"
    log "$t: corpus now $(ls "$corpus" | wc -l) inputs"
  fi
  rm -rf "$new"
done
[[ ${#failed[@]} -eq 0 ]] || die "crashes in: ${failed[*]} (inputs and logs in $OUT)"
