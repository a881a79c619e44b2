#!/usr/bin/env bash
# Proof that the suite catches a broken scheduler: build scx_tick with each
# test-only breakage (bpf/breakages.h) and run the VM scenarios that must
# catch it; print a markdown table and keep a record of each breakage in
# records/mutants/mutants-DATE.jsonl (scripts/breakage-table.py makes
# docs/testing.md's table from the latest records). Not part of
# scripts/test.sh (about 45 minutes); rebuilds the normal scx_tick at the
# end, also when interrupted.
#
#   scripts/mutants.sh              every breakage a scenario catches
#   scripts/mutants.sh nomiss fifo  only these
#   scripts/mutants.sh --list       each breakage and its scenarios; builds nothing
#
# The breakages are bpf/breakages.h's, in its order; the scenarios that must
# fail with one name it in a "# Catches: NAME..." line of their header
# ("# Catches on the oldest kernel: NAME...": the scenario's oldest/ run). A
# scenario catches breakage B only when it fails for B's reason: a FAIL line
# of its record (scripts/test.sh's, SCX_TICK_RECORDS) carries the marker
# "[catches ... B ...]" (tests/lib.sh: fail_catches) of the check that saw
# the broken behaviour. One that fails without it, or skips, is reported as
# failed for another reason, with its first FAIL (or SKIP) line; one that
# passes missed it.
#
# A record (one JSON line per breakage): breakage, what (its comment in
# bpf/breakages.h), commit (scripts/common.sh: commit_id), date, must (the
# scenarios that name it), caught_by, missed_by, other_reason ([{scenario,
# failure}]), reasons ([{scenario, failure}]: the marked FAIL lines) and
# seconds (its build and scenarios).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/common.sh

# The breakages, from their one declaration (#define SCX_TICK_BREAK_X 0 /* name: ... */).
mapfile -t ALL < <(sed -n 's|^#define SCX_TICK_BREAK_[A-Z_]* 0 /\* \([a-z-]*\): .*|\1|p' bpf/breakages.h)
((${#ALL[@]})) || die "no breakage found in bpf/breakages.h"
# breakage -> what it breaks (the rest of its comment)
declare -A WHAT=()
while IFS=$'\t' read -r b w; do WHAT[$b]=$w; done < <(
  sed -n 's|^#define SCX_TICK_BREAK_[A-Z_]* 0 /\* \([a-z-]*\): \(.*\) \*/ *$|\1\t\2|p' bpf/breakages.h)
known() { [[ " ${ALL[*]} " == *" $1 "* ]]; }
# breakage -> the scenarios that must fail with it, in file name order
declare -A MUST=()
while IFS=: read -r f line; do
  s=${f#tests/} && s=${s%.sh}
  # "# Catches on the oldest kernel: NAME...": its oldest/ run (scripts/test.sh)
  [[ $line == "# Catches on the oldest kernel:"* ]] && s=oldest/$s
  for b in ${line#*:}; do
    known "$b" || die "$f: catches $b, not a breakage of bpf/breakages.h (${ALL[*]})"
    MUST[$b]+="${MUST[$b]:+ }$s"
  done
done < <(grep -HE '^# Catches( on the oldest kernel)?:' tests/*/*.sh | LC_ALL=C sort)
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

# One scenario's outcome under breakage B, from its record (the last
# attempt's): one JSON line {scenario, outcome: caught|missed|other, line}.
outcome() { # BREAKAGE SCENARIO EXIT-STATUS RECORDS LOG
  python3 - "$@" <<'PY'
import json, re, sys
b, s, rc, records, log = sys.argv[1:6]
recs = []
try:
    for l in open(records, errors="replace"):
        if l.strip():
            r = json.loads(l)
            if r.get("scenario") == s:
                recs.append(r)
except (OSError, ValueError):
    pass
MARK = re.compile(r"FAIL \[catches ([^\]]*)\]:")
def first_fail():  # in the log: a scenario's FAIL line, not test.sh's "FAILED  NAME"
    try:
        return next((l.rstrip() for l in open(log, errors="replace") if re.match(r"FAIL( \[|:)", l)), "")
    except OSError:
        return ""
if not recs:
    # no record (not run, or it could not be written): the exit status
    out = ("missed", "") if rc == "0" else ("other", first_fail() or f"exit {rc}, no record of the scenario")
else:
    last = recs[-1]
    fails = [f.rstrip() for f in last.get("failures", [])]
    # the checks' markers: "FAIL [catches NAME...]: message"
    marks = [(f, MARK.match(f)) for f in fails]
    marked = [f for f, m in marks if m and b in m.group(1).split()]
    if last.get("result") == "pass":
        out = ("missed", "")
    elif last.get("result") == "skip":
        out = ("other", "skipped: " + (last.get("skips") or ["SKIP (no line)"])[0])
    elif marked:
        out = ("caught", marked[0])
    else:
        out = ("other", fails[0] if fails else first_fail() or f"exit {rc}, no FAIL line")
print(json.dumps({"scenario": s, "outcome": out[0], "line": out[1]}))
PY
}

# Breakage B's record, appended to RECORD, from its scenarios' outcomes;
# prints its markdown row (and, to stderr, what caught it and what did not).
keep() { # BREAKAGE WHAT COMMIT SECONDS OUTCOMES RECORD MUST...
  python3 - "$@" <<'PY'
import datetime, json, sys
b, what, commit, secs, outcomes, record, *must = sys.argv[1:]
rows = [json.loads(l) for l in open(outcomes) if l.strip()]
pick = lambda o: [r["scenario"] for r in rows if r["outcome"] == o]
rec = {
    "breakage": b,
    "what": what,
    "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "must": must,
    "caught_by": pick("caught"),
    "missed_by": pick("missed"),
    "other_reason": [{"scenario": r["scenario"], "failure": r["line"]} for r in rows if r["outcome"] == "other"],
    "reasons": [{"scenario": r["scenario"], "failure": r["line"]} for r in rows if r["outcome"] == "caught"],
    "seconds": int(secs),
}
with open(record, "a") as f:
    f.write(json.dumps(rec) + "\n")
cell = lambda xs: ", ".join(f"`{x}`" for x in xs) or "none"
text = lambda t: t.replace("|", "\\|")
other = "; ".join(f"`{o['scenario']}`: {text(o['failure'])}" for o in rec["other_reason"]) or "none"
why = "; ".join(f"`{o['scenario']}`: {text(o['failure'])}" for o in rec["reasons"]) or "-"
print(f"| `{b}` | {cell(rec['caught_by'])} | {cell(rec['missed_by'])} | {other} | {why} |")
say = lambda xs: " ".join(xs) or "none"
print(f"[scx_tick] breakage {b}: caught by {say(rec['caught_by'])}; missed by {say(rec['missed_by'])}; "
      f"failed for another reason: {say(o['scenario'] for o in rec['other_reason'])}", file=sys.stderr)
for o in rec["other_reason"]:
    print(f"[scx_tick]   {o['scenario']}: {o['failure']}", file=sys.stderr)
PY
}

COMMIT=$(commit_id)
mkdir -p records/mutants || die "cannot create records/mutants"
RECORD=records/mutants/mutants-$(date -u +%Y%m%d-%H%M%S).jsonl
ROWS=()
for b in "${ORDER[@]}"; do
  t=$SECONDS
  log "breakage $b: building"
  SCX_TICK_BREAK=$b build || die "build with SCX_TICK_BREAK=$b failed"
  outcomes=/tmp/scx_tick-mutant-$b.outcomes
  : >"$outcomes"
  for s in ${MUST[$b]}; do
    log "breakage $b: $s"
    base=/tmp/scx_tick-mutant-$b-${s//\//_}
    : >"$base.records.jsonl"
    SCX_TICK_SECOND_RUN=0 SCX_TICK_RECORDS=$base.records.jsonl bash scripts/test.sh --no-setup "$s" >"$base.log" 2>&1
    outcome "$b" "$s" $? "$base.records.jsonl" "$base.log" >>"$outcomes" || die "could not read $s's record ($base.records.jsonl)"
  done
  # shellcheck disable=SC2086 # the scenarios, one word each
  row=$(keep "$b" "${WHAT[$b]:-}" "$COMMIT" $((SECONDS - t)) "$outcomes" "$RECORD" ${MUST[$b]}) ||
    die "could not write breakage $b's record to $RECORD"
  ROWS+=("$row")
done

echo
echo "| breakage (SCX_TICK_BREAK) | scenarios that failed for its reason (caught it) | scenarios that should have and passed | failed for another reason | why (the marked FAIL lines) |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
echo
echo "records: $RECORD"
