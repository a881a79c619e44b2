#!/usr/bin/env bash
# Build scx_tick and install it on this machine: scx_tick and
# scx_tick_user (which --userspace runs, next to scx_tick), the systemd unit,
# an example configuration and the unit's flags file (never overwriting
# either when it exists). Warns when this kernel has no sched_ext and when
# another sched_ext loader's unit is enabled (starting scx_tick stops it).
#
#   scripts/install.sh [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--no-build]
#   scripts/install.sh --uninstall [the same directories]
#
# Defaults: --prefix /usr/local (binaries in PREFIX/bin), --sysconfdir /etc
# (scx_tick.toml, default/scx_tick), --unitdir /etc/systemd/system.
# --no-build installs what `cargo build --release -p scx_tick -p
# scx_tick_user` left in target/release (build as your user, install as
# root). --uninstall stops and disables the unit and removes what install
# put there; a configuration or flags file you changed is kept (and said).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=/usr/local SYSCONFDIR=/etc UNITDIR=/etc/systemd/system BUILD=1 UNINSTALL=0
log() { echo "[scx_tick install] $*" >&2; }
die() { echo "[scx_tick install] error: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) PREFIX=$2; shift 2 ;;
    --sysconfdir) SYSCONFDIR=$2; shift 2 ;;
    --unitdir) UNITDIR=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (usage: install.sh [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--no-build] [--uninstall])" ;;
  esac
done

CONFIG="$SYSCONFDIR/scx_tick.toml" FLAGS="$SYSCONFDIR/default/scx_tick" UNIT="$UNITDIR/scx_tick.service"
have_systemd() { [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; }
# The scx project's loaders enabled here: scx_tick's unit Conflicts= with them
enabled_loaders() {
  local other
  have_systemd || return 0
  for other in scx.service scx_loader.service; do
    [[ "$(systemctl is-enabled "$other" 2>/dev/null)" == enabled ]] && echo "$other"
  done
  return 0
}

# The example files, as installed: an installed copy still equal to them
# is ours to remove; one the operator changed is theirs.
remove_unless_changed() { # installed example
  if [[ ! -e "$1" ]]; then return 0; fi
  if cmp -s "$1" "$2"; then rm -f "$1" && log "removed $1"; else log "kept $1: it differs from the example (your changes)"; fi
}

if [[ $UNINSTALL -eq 1 ]]; then
  if have_systemd && [[ -e "$UNIT" ]]; then
    systemctl disable --now scx_tick.service >&2 || log "could not stop or disable scx_tick.service (see above)"
  fi
  rm -f "$UNIT" "$PREFIX/bin/scx_tick" "$PREFIX/bin/scx_tick_user"
  log "removed $UNIT, $PREFIX/bin/scx_tick and $PREFIX/bin/scx_tick_user"
  have_systemd && systemctl daemon-reload
  remove_unless_changed "$CONFIG" "$ROOT/examples/game-server.toml"
  remove_unless_changed "$FLAGS" "$ROOT/services/scx_tick.default"
  # scx_tick moved the runner threads back and detached when it stopped;
  # a scheduler the unit stopped by Conflicts= is the operator's to start
  for other in $(enabled_loaders); do
    log "$other is enabled: systemctl start $other runs it again"
  done
  exit 0
fi

BIN="$ROOT/target/release"
if [[ $BUILD -eq 1 ]]; then
  command -v cargo >/dev/null || die "cargo is not on PATH (under sudo it often is not): build first as your user with
  cargo build --release --locked -p scx_tick -p scx_tick_user
then run: sudo scripts/install.sh --no-build"
  log "building scx_tick and scx_tick_user (release)"
  (cd "$ROOT" && cargo build --release --locked -p scx_tick --bin scx_tick -p scx_tick_user)
fi
for b in scx_tick scx_tick_user; do
  [[ -x "$BIN/$b" ]] || die "$BIN/$b is missing: build it with cargo build --release --locked -p scx_tick -p scx_tick_user"
done

# scx_tick --userspace finds scx_tick_user beside itself: same directory
install -d "$PREFIX/bin"
install -m 0755 "$BIN/scx_tick" "$BIN/scx_tick_user" "$PREFIX/bin/"
log "installed $PREFIX/bin/scx_tick and $PREFIX/bin/scx_tick_user ($("$PREFIX/bin/scx_tick" --version))"

install -d "$SYSCONFDIR"
if [[ -e "$CONFIG" ]]; then
  log "kept the existing $CONFIG (the example is $ROOT/examples/game-server.toml)"
else
  install -m 0644 "$ROOT/examples/game-server.toml" "$CONFIG"
  log "installed the example configuration $CONFIG: edit its [[group]] entries for your server"
fi

install -d "$SYSCONFDIR/default"
if [[ -e "$FLAGS" ]]; then
  log "kept the existing $FLAGS"
else
  install -m 0644 "$ROOT/services/scx_tick.default" "$FLAGS"
  log "installed $FLAGS: the unit's extra flags (metrics, JSON lines, watchdog), none set"
fi

install -d "$UNITDIR"
sed -e "s|/usr/local/bin/scx_tick|$PREFIX/bin/scx_tick|g" \
  -e "s|/etc/scx_tick.toml|$CONFIG|g" \
  -e "s|/etc/default/scx_tick|$FLAGS|g" \
  "$ROOT/services/scx_tick.service" >"$UNIT"
chmod 0644 "$UNIT"
log "installed $UNIT"
have_systemd && systemctl daemon-reload

# What would keep it from running here, said now rather than at the first start
if [[ ! -d /sys/kernel/sched_ext ]]; then
  log "warning: this kernel ($(uname -r)) has no sched_ext (/sys/kernel/sched_ext is missing): the unit is skipped until you boot one that has (kernels by distribution: docs/operating.md)"
elif [[ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" == enabled ]] &&
  ! grep -q '^scx_tick' /sys/kernel/sched_ext/root/ops 2>/dev/null; then
  log "warning: another sched_ext scheduler runs now ($(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)): scx_tick cannot start until it stops"
fi
for other in $(enabled_loaders); do
  log "warning: $other is enabled: starting scx_tick stops it (only one sched_ext scheduler runs at a time); systemctl disable $other keeps it from starting at boot instead of scx_tick"
done

"$PREFIX/bin/scx_tick" check-config "$CONFIG" >&2 || die "$CONFIG does not validate (see above)"
cat >&2 <<NEXT
[scx_tick install] next:
  systemctl enable --now scx_tick          # start now and at every boot
  cat /sys/kernel/sched_ext/state          # enabled
  cat /sys/kernel/sched_ext/root/ops       # scx_tick
  journalctl -u scx_tick -f                # its log;  scx_tick --monitor 1: live statistics
NEXT
