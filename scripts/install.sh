#!/usr/bin/env bash
# Build scx_tick and install it on this machine: scx_tick and
# scx_tick_user (which --userspace runs, next to scx_tick), the systemd unit
# and an example configuration (never overwriting one that exists).
#
#   scripts/install.sh [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--no-build]
#
# Defaults: --prefix /usr/local (binaries in PREFIX/bin), --sysconfdir /etc
# (scx_tick.toml), --unitdir /etc/systemd/system. --no-build installs what
# `cargo build --release -p scx_tick -p scx_tick_user` left in target/release
# (build as your user, install as root).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=/usr/local SYSCONFDIR=/etc UNITDIR=/etc/systemd/system BUILD=1
log() { echo "[scx_tick install] $*" >&2; }
die() { echo "[scx_tick install] error: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) PREFIX=$2; shift 2 ;;
    --sysconfdir) SYSCONFDIR=$2; shift 2 ;;
    --unitdir) UNITDIR=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (usage: install.sh [--prefix DIR] [--sysconfdir DIR] [--unitdir DIR] [--no-build])" ;;
  esac
done

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

CONFIG="$SYSCONFDIR/scx_tick.toml"
install -d "$SYSCONFDIR"
if [[ -e "$CONFIG" ]]; then
  log "kept the existing $CONFIG (the example is $ROOT/examples/game-server.toml)"
else
  install -m 0644 "$ROOT/examples/game-server.toml" "$CONFIG"
  log "installed the example configuration $CONFIG: edit its [[group]] entries for your server"
fi

install -d "$UNITDIR"
sed -e "s|/usr/local/bin/scx_tick|$PREFIX/bin/scx_tick|g" \
  -e "s|/etc/scx_tick.toml|$CONFIG|g" \
  "$ROOT/services/scx_tick.service" >"$UNITDIR/scx_tick.service"
chmod 0644 "$UNITDIR/scx_tick.service"
log "installed $UNITDIR/scx_tick.service"
if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; then
  systemctl daemon-reload
fi

"$PREFIX/bin/scx_tick" check-config "$CONFIG" >&2 || die "$CONFIG does not validate (see above)"
cat >&2 <<NEXT
[scx_tick install] next:
  systemctl enable --now scx_tick          # start now and at every boot
  cat /sys/kernel/sched_ext/state          # enabled
  cat /sys/kernel/sched_ext/root/ops       # scx_tick
  journalctl -u scx_tick -f                # its log;  scx_tick --monitor 1: live statistics
NEXT
