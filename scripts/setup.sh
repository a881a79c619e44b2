#!/usr/bin/env bash
# Bring a bare Debian bookworm machine to the point where scx_tick builds and
# its VM tests run. Idempotent: a second run downloads nothing.
#
#   scripts/setup.sh            packages + guest kernels + release build
#   scripts/setup.sh --no-build packages + guest kernels only
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/common.sh
source "$ROOT/scripts/common.sh"

BUILD=1
[[ "${1:-}" == "--no-build" ]] && BUILD=0

SUDO=""
[[ $EUID -ne 0 ]] && SUDO="sudo"

# Packages from bookworm itself (the host's own suite: never upgrades libc).
HOST_PKGS=(clang-19 llvm-19 libclang1-19 libelf-dev zlib1g-dev pkg-config libseccomp-dev
  busybox-static cpio xz-utils stress-ng rt-tests procps kmod python3
  python3-venv udev systemd
  patch # user/vendor/scx_rustland_core/check-patch.sh (cargo test)
  g++ # libFuzzer, which the libfuzzer-sys crate builds (scripts/fuzz.sh)
  minetest-server # a real tick server for the scenarios (tests/servers/minetest.sh)
  openttd openttd-opengfx # a second one, a transport simulation (tests/servers/openttd.sh)
  openjdk-17-jdk-headless # the real JVM of vm/installed_service_follows_server_restart
  prometheus) # scrapes scx_tick and evaluates examples/monitoring in vm/operators_guide_runs_under_systemd
# Newer tools from bookworm-backports (built against bookworm's libc).
BPO_PKGS=(qemu-system-x86 bpftool)

# The Debian archive this machine already uses (its mirror or proxy): the
# first URI of an enabled source that serves bookworm itself, from the deb822
# files in sources.list.d or the one-line sources.list (and *.list) format.
debian_archive_uri() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$f" ]] || continue
    # deb822: paragraphs of "Key: value"; comments and continuation lines skipped
    awk 'BEGIN { RS = ""; FS = "\n" }
      { types = uris = suites = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^#/ || $i ~ /^[ \t]/ || $i !~ /:/) continue
          k = tolower($i); sub(/[ \t]*:.*/, "", k)
          v = $i; sub(/^[^:]*:[ \t]*/, "", v)
          if (k == "types") types = v; else if (k == "uris") uris = v
          else if (k == "suites") suites = v; else if (k == "enabled") enabled = tolower(v)
        }
        split(uris, u, /[ \t]+/)
        if (enabled != "no" && (" " types " ") ~ /[ \t]deb[ \t]/ && (" " suites " ") ~ /[ \t]bookworm[ \t]/ && u[1] !~ /^cdrom:/) { print u[1]; exit }
      }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r "$f" ]] || continue
    # one-line: deb [options] URI SUITE COMPONENT...
    awk '$1 == "deb" { $1 = ""; sub(/^ *\[[^]]*\] */, ""); sub(/^ +/, "")
                       if ($2 == "bookworm" && $1 !~ /^cdrom:/) { print $1; exit } }' "$f"
  done
}

apt_sources() {
  # trixie-backports is only used to *download* the guest kernel; pin it (and
  # trixie) at 50 so nothing is ever installed from it by accident. Both
  # backports suites come from the archive the machine already uses.
  local src=/etc/apt/sources.list.d/scx_tick.sources
  local pin=/etc/apt/preferences.d/scx_tick.pref
  local uri want_src
  uri=$(debian_archive_uri | head -1)
  [[ -n "$uri" ]] || die "no Debian archive for bookworm in /etc/apt/sources.list or /etc/apt/sources.list.d/: add the machine's Debian mirror there first (scx_tick adds its backports suites from it)"
  want_src=$(cat <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
)
  local want_pin
  want_pin=$(cat <<'PIN'
Package: *
Pin: release n=trixie-backports
Pin-Priority: 50

Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100
PIN
)
  local changed=0
  if [[ "$(cat "$src" 2>/dev/null)" != "$want_src" ]]; then
    echo "$want_src" | $SUDO tee "$src" >/dev/null; changed=1
  fi
  if [[ "$(cat "$pin" 2>/dev/null)" != "$want_pin" ]]; then
    echo "$want_pin" | $SUDO tee "$pin" >/dev/null; changed=1
  fi
  # apt-cache needs fresh lists; refresh when sources changed or lists are old.
  local stamp=/var/lib/apt/lists/scx_tick.stamp
  if [[ $changed -eq 1 || ! -e $stamp || -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]]; then
    log "apt-get update"
    $SUDO apt-get update -qq
    $SUDO touch "$stamp"
  fi
}

missing_pkgs() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

install_pkgs() {
  local miss
  mapfile -t miss < <(missing_pkgs "${HOST_PKGS[@]}")
  if [[ ${#miss[@]} -gt 0 ]]; then
    log "installing ${miss[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends -t bookworm "${miss[@]}" >/tmp/scx_tick-apt.log 2>&1 \
      || { tail -20 /tmp/scx_tick-apt.log; die "apt-get install failed"; }
  fi
  mapfile -t miss < <(missing_pkgs "${BPO_PKGS[@]}")
  if [[ ${#miss[@]} -gt 0 ]]; then
    log "installing ${miss[*]} from bookworm-backports"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports "${miss[@]}" \
      >/tmp/scx_tick-apt.log 2>&1 || { tail -20 /tmp/scx_tick-apt.log; die "apt-get install failed"; }
  fi
  # Guard: the host's libc must still come from bookworm.
  if dpkg-query -W -f='${Version}' libc6 | grep -qvE '^2\.36'; then
    die "libc6 is not bookworm's 2.36 any more: check /etc/apt/preferences.d"
  fi
}

# virtme-ng for `vm.sh --vng`, pinned, in a venv of its own under the cache:
# bookworm's Python is externally managed (no pip into the system), and
# Debian has no virtme-ng before trixie. pip's own configuration (index,
# proxy) applies. vng also needs udev on the host (HOST_PKGS). Only the vng/
# scenarios need it: when it cannot be installed, they fail and say why,
# and everything else still runs.
install_vng() {
  [[ "$("$VNG_VENV/bin/vng" --version 2>/dev/null)" == "virtme-ng $VNG_VERSION" ]] && return
  log "installing virtme-ng $VNG_VERSION into $VNG_VENV"
  rm -rf "$VNG_VENV"
  if ! { /usr/bin/python3 -m venv "$VNG_VENV" \
      && "$VNG_VENV/bin/pip" install -q --disable-pip-version-check "virtme-ng==$VNG_VERSION"; } >/tmp/scx_tick-pip.log 2>&1; then
    tail -5 /tmp/scx_tick-pip.log >&2
    rm -rf "$VNG_VENV"
    log "warning: virtme-ng $VNG_VERSION could not be installed (log: /tmp/scx_tick-pip.log): the vng/ scenarios will fail"
  fi
}

check_rust() {
  command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (>= $RUST_MIN)"
  local have
  have=$(rustc --version | awk '{print $2}')
  if [[ "$(printf '%s\n%s\n' "$RUST_MIN" "$have" | sort -V | head -1)" != "$RUST_MIN" ]]; then
    die "rustc $have is too old: the scx crates need >= $RUST_MIN (rustup update stable)"
  fi
}

# unpack_kernel V PACKAGE...: kernel V's packages unpacked (never
# installed) into the cache, its vmlinuz, config and modules linked in its
# directory; fails when its config has no CONFIG_SCHED_CLASS_EXT=y.
unpack_kernel() {
  local v=$1 dir="$KERNEL_CACHE/$1" tmp
  shift
  [[ -e "$dir/no-sched-ext" ]] && return 1 # looked at before: its files are gone
  if [[ ! -e "$dir/ok" ]]; then
    log "downloading guest kernel $v"
    rm -rf "$dir"; mkdir -p "$dir/debs" "$dir/root"
    (cd "$dir/debs" && apt-get download -q "$@" 2>&1 | grep -v unsandboxed | tail -2) \
      || { log "download of $v failed"; return 1; }
    # (called as `unpack_kernel ... || continue`, so set -e is off in here)
    for tmp in "$dir"/debs/*.deb; do dpkg-deb -x "$tmp" "$dir/root" || return 1; done
    rm -rf "$dir/debs"
    touch "$dir/ok"
  fi
  local mdir="$dir/root/usr/lib/modules/$v"
  local cfg="$mdir/config" vmlinuz="$mdir/vmlinuz"
  [[ -e "$cfg" ]] || cfg="$dir/root/boot/config-$v"
  [[ -e "$vmlinuz" ]] || vmlinuz="$dir/root/boot/vmlinuz-$v"
  [[ -e "$cfg" ]] || { log "kernel $v: no configuration file in its packages"; return 1; }
  if ! grep -q '^CONFIG_SCHED_CLASS_EXT=y' "$cfg"; then
    log "kernel $v has no CONFIG_SCHED_CLASS_EXT=y"
    rm -rf "$dir/root"; touch "$dir/no-sched-ext"
    return 1
  fi
  [[ -e "$vmlinuz" ]] || die "kernel $v has no vmlinuz"
  depmod -b "$dir/root/usr" "$v" 2>/dev/null || /sbin/depmod -b "$dir/root/usr" "$v" || return 1
  (cd "$dir" && ln -sfn "$vmlinuz" vmlinuz && ln -sfn "$cfg" config && ln -sfn "$mdir" modules) || return 1
}

# link_kernel NAME V: the cache's NAME/ (current, oldest) is kernel V
link_kernel() {
  ln -sfn "$2" "$KERNEL_CACHE/$1.tmp"
  mv -T "$KERNEL_CACHE/$1.tmp" "$KERNEL_CACHE/$1"
  log "guest kernel $1: $2 (sched_ext) ready in $KERNEL_CACHE/$2"
}

# kernel_cached NAME: the cache's NAME/ (current, oldest) holds a kernel (said)
kernel_cached() {
  [[ -e "$KERNEL_CACHE/$1/vmlinuz" ]] || return 1
  log "guest kernel $1 cached: $(readlink "$KERNEL_CACHE/$1")"
}

# kernel_versions PACKAGE VERSION-REGEX SORT-OPTION: the versions V of the
# archive's packages PACKAGE-V, sorted by `sort SORT-OPTION`
kernel_versions() {
  apt-cache search --names-only "^$1-$2\$" | awk '{print $1}' | sed "s/^$1-//" | sort "$3"
}

# The guest kernel: the newest 7.x amd64 kernel in trixie-backports whose
# config has CONFIG_SCHED_CLASS_EXT=y (Debian splits 7.x kernels into
# linux-binary / linux-modules / linux-base).
guest_kernel() {
  kernel_cached current && return
  local versions v
  mapfile -t versions < <(kernel_versions linux-binary '7\.[0-9.]+\+deb[0-9]+-amd64' -rV)
  [[ ${#versions[@]} -gt 0 ]] || die "no linux-binary-7.x-amd64 package found in trixie-backports: cannot get a sched_ext guest kernel"
  for v in "${versions[@]}"; do
    unpack_kernel "$v" "linux-binary-$v" "linux-modules-$v" "linux-base-$v" || continue
    link_kernel current "$v"
    return
  done
  die "none of ${versions[*]} has CONFIG_SCHED_CLASS_EXT=y: no sched_ext guest kernel available"
}

# The oldest kernel the suite boots (its oldest/ scenarios): the oldest
# 6.x amd64 kernel in trixie-backports with sched_ext, one package each. It
# lacks kfuncs the current one has (scx_bpf_dsq_peek), so the scx headers'
# fallbacks run there; the README names it.
oldest_kernel() {
  kernel_cached oldest && return
  local versions v
  mapfile -t versions < <(kernel_versions linux-image '6\.[0-9.]+\+deb13-amd64' -V)
  for v in "${versions[@]}"; do
    unpack_kernel "$v" "linux-image-$v" || continue
    link_kernel oldest "$v"
    return
  done
  # the rest of the set-up and every other scenario do not need it
  log "WARNING: no 6.x kernel with CONFIG_SCHED_CLASS_EXT=y in trixie-backports (${versions[*]:-none}): the oldest/ scenarios will fail (scripts/vm.sh --kernel oldest has no kernel)"
}

apt_sources
install_pkgs
check_rust
mkdir -p "$KERNEL_CACHE"
guest_kernel
oldest_kernel
install_vng
# the OpenTTD scenario's map, made here in seconds (a minute in the guest)
# shellcheck source=tests/servers/openttd.sh
(source "$ROOT/tests/servers/openttd.sh" && ottd_make_save) || die "making the OpenTTD map ($CACHE_DIR/openttd) failed"
# the JVM scenarios' server classes, compiled here in a second (about 20 s
# in the guest; tests/lib.sh: region_server_classes)
mkdir -p "$CACHE_DIR/java" && javac -d "$CACHE_DIR/java" "$ROOT/tests/fixtures/RegionServer.java" ||
  die "javac tests/fixtures/RegionServer.java failed"
if [[ $BUILD -eq 1 ]]; then
  log "cargo build --release"
  (cd "$ROOT" && cargo build --release --locked --workspace -q 2>&1 | tail -20) || die "cargo build failed"
fi
log "setup done"
