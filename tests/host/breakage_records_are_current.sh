#!/usr/bin/env bash
# The proof stays current: every breakage of bpf/breakages.h has a record
# of scripts/mutants.sh on the code it breaks as committed (no commit
# since changed a file that tests its switch), every scenario that names
# it caught it for its reason, and docs/testing.md's table is the one those
# records give (scripts/breakage-table.py --check). A change to such code
# fails here until `scripts/mutants.sh NAME` has run on it again.
source "$(dirname "$0")/../lib.sh"
cd "$ROOT"
# the check dates records by git history: a clone without it cannot tell
[[ -d .git || -f .git ]] || skip_platform "not a git checkout: no history to date the records by"
[[ "$(git rev-parse --is-shallow-repository)" == false ]] \
  || skip_platform "a shallow clone: no history to date the records by (git fetch --unshallow)"
python3 scripts/breakage-table.py --check >"$WORK/check" 2>&1 || { sed 's/^/  /' "$WORK/check" >&2; fail "breakage records not current (above)"; }
note "$(tail -1 "$WORK/check")"
