#!/usr/bin/env bash
# Every bad flag, subcommand argument or config value (tests/bad_inputs.sh)
# is refused before anything is loaded: non-zero exit, no crash, and a
# one-line message naming the key and what is allowed; a good file passes.
source "$(dirname "$0")/../lib.sh"
source "$ROOT/tests/bad_inputs.sh"
run_bad_inputs
note "$BAD_INPUTS_RUN bad inputs refused with clear messages, e.g. $(head -1 "$WORK/err")"
cat >"$WORK/good.toml" <<'T'
stealThresholdMillis = 2
enableMidTickTasks = false
T
"$SCX" check-config "$WORK/good.toml" >"$WORK/out" 2>&1 || fail "a good config was refused: $(cat "$WORK/out")"
grep -q "valid" "$WORK/out" || fail "check-config printed: $(cat "$WORK/out")"
