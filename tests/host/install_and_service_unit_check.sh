#!/usr/bin/env bash
# scripts/install.sh puts both binaries, the unit, the example
# configuration and the flags file in place (here under a scratch prefix),
# warns that this host's kernel has no sched_ext (the host runs none), and
# --uninstall removes them all but the files the user changed; the unit
# passes `systemd-analyze verify`; the example validates before its cgroups exist;
# --version names the commit and the target, --help-stats every statistic (and ends
# quietly when its reader has gone).
source "$(dirname "$0")/../lib.sh"
P=$WORK/prefix
bash "$ROOT/scripts/install.sh" --no-build --prefix "$P" --sysconfdir "$P/etc" --unitdir "$P/units" 2>"$WORK/install.err" \
  || fail "install failed: $(cat "$WORK/install.err")"
for f in "$P/bin/scx_tick" "$P/bin/scx_tick_user" "$P/etc/scx_tick.toml" "$P/etc/default/scx_tick" "$P/units/scx_tick.service"; do
  [[ -e "$f" ]] || fail "install left no $f"
done
grep -qx "ExecStart=$P/bin/scx_tick --config $P/etc/scx_tick.toml \$SCX_TICK_FLAGS" "$P/units/scx_tick.service" \
  && grep -qx "EnvironmentFile=-$P/etc/default/scx_tick" "$P/units/scx_tick.service" \
  || fail "unit's ExecStart and flags file: $(grep -E 'ExecStart=|EnvironmentFile' "$P/units/scx_tick.service")"
if [[ ! -d /sys/kernel/sched_ext ]]; then
  grep -q "warning: this kernel .* has no sched_ext" "$WORK/install.err" || fail "install did not warn that this kernel has no sched_ext: $(cat "$WORK/install.err")"
  note "install on a kernel without sched_ext: $(grep -o 'warning: this kernel.*sched_ext is missing)' "$WORK/install.err")"
fi
# a second install keeps the configuration the user edited
echo "# edited" >>"$P/etc/scx_tick.toml"
bash "$ROOT/scripts/install.sh" --no-build --prefix "$P" --sysconfdir "$P/etc" --unitdir "$P/units" 2>/dev/null || fail "second install failed"
grep -q "^# edited" "$P/etc/scx_tick.toml" || fail "a second install overwrote the configuration"
# a copy to uninstall: the edited configuration is kept, the rest goes
U=$WORK/uprefix
cp -a "$P" "$U"
sed -i "s|$P|$U|g" "$U/units/scx_tick.service"
bash "$ROOT/scripts/install.sh" --uninstall --prefix "$U" --sysconfdir "$U/etc" --unitdir "$U/units" 2>"$WORK/uninstall.err" \
  || fail "uninstall failed: $(cat "$WORK/uninstall.err")"
for f in "$U/bin/scx_tick" "$U/bin/scx_tick_user" "$U/etc/default/scx_tick" "$U/units/scx_tick.service"; do
  [[ ! -e "$f" ]] || fail "uninstall left $f"
done
grep -q "^# edited" "$U/etc/scx_tick.toml" && grep -q "kept $U/etc/scx_tick.toml" "$WORK/uninstall.err" \
  || fail "uninstall removed the edited configuration, or did not say it kept it: $(cat "$WORK/uninstall.err")"
command -v systemd-analyze >/dev/null || fail "no systemd-analyze to verify the unit with (scripts/setup.sh installs systemd)"
systemd-analyze verify "$P/units/scx_tick.service" >"$WORK/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$WORK/verify")"
note "systemd-analyze verify: ok $(cat "$WORK/verify")"
"$SCX" check-config "$ROOT/examples/game-server.toml" >"$WORK/check" 2>&1 || fail "the example does not validate: $(cat "$WORK/check")"
grep -q "not checked:" "$WORK/check" && grep -q "which processes and threads tick group world selects" "$WORK/check" \
  || fail "check-config does not say what it did not check: $(cat "$WORK/check")"
printf '[[group]]\ncgroup = "no/such/cgroup/yet"\n' >"$WORK/later.toml"
"$SCX" check-config "$WORK/later.toml" >"$WORK/check" 2>&1 || fail "a config for a cgroup made later is refused: $(cat "$WORK/check")"
grep -qE "does not exist now; scx_tick will wait for it|is not a cgroup v2 mount here" "$WORK/check" || fail "check-config: $(cat "$WORK/check")"
"$SCX" --version | grep -qE '^scx_tick [0-9.]+ \(git ([0-9a-f]{7,}(-dirty)?|unknown)\) [a-z0-9_]+(-[a-z0-9_]+){2,}(/debug)?$' || fail "--version: $("$SCX" --version)"
"$SCX" --help-stats >"$WORK/help" || fail "--help-stats failed"
for f in timestamp_s steals_refused lends hints_used; do grep -q "$f" "$WORK/help" || fail "--help-stats lacks $f"; done
# a reader that closed the pipe (`| head`): no "Broken pipe", exit 0
python3 - "$SCX" <<'PY' || fail "--help-stats into a closed pipe did not end quietly with success"
import os, subprocess, sys
r, w = os.pipe(); os.close(r)
p = subprocess.run([sys.argv[1], "--help-stats"], stdout=w, stderr=subprocess.PIPE)
assert p.returncode == 0 and not p.stderr, (p.returncode, p.stderr)
PY
note "$("$SCX" --version)"
