#!/usr/bin/env bash
# Run one command inside a throw-away QEMU guest booted with the sched_ext
# kernel that scripts/setup.sh unpacked. The guest sees the host's root
# read-only (9p) with tmpfs overlays on /etc /var /root /tmp, has cgroup2,
# bpf, debugfs and tracefs mounted and the kernel config in /boot, and runs
# the command as root in the caller's working directory.
#
#   scripts/vm.sh [--cpus N] [--mem MB] [--timeout SECS] [--env NAME=VALUE]...
#                 [--verbose] [--vng] -- COMMAND [ARGS...]
#
# The command's stdout and stderr stream back live, separately. Exit status:
#   the command's own, or
#   124  the guest did not report within --timeout (console tail printed)
#   125  the guest died without reporting (panic, qemu error; console tail printed)
# SCX_TICK_ACCEL=kvm|tcg forces the accelerator; by default KVM is used only
# when a probe boot showed it works (it does not on PVM hosts).
# --vng runs the command with virtme-ng (`pip install virtme-ng`) instead.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh"

CPUS=4 MEM=2048 TIMEOUT=600 VERBOSE=0 VNG=0 ENVS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpus) CPUS=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    --vng) VNG=1; shift ;;
    --) shift; break ;;
    *) die "vm.sh: unknown option $1 (usage: vm.sh [--cpus N] [--mem MB] [--timeout S] [--env K=V] [--verbose] [--vng] -- CMD...)" ;;
  esac
done
[[ $# -gt 0 ]] || die "vm.sh: no command given (usage: vm.sh [options] -- CMD...)"

KDIR="$KERNEL_CACHE/current"
[[ -e "$KDIR/vmlinuz" ]] || die "no guest kernel in $KDIR: run scripts/setup.sh first"
KVER="$(basename "$(readlink -f "$KDIR/modules")")"
for v in RUST_LOG RUST_BACKTRACE; do [[ -n "${!v:-}" ]] && ENVS+=("$v=${!v}"); done

# The command, quoted for the guest shell, with the caller's cwd and PATH.
guest_script() {
  echo "cd $(printf %q "$PWD") || { echo \"vm.sh: $PWD is not visible in the guest\" >&2; exit 126; }"
  echo "export PATH=$(printf %q "$PATH:/usr/sbin:/sbin") HOME=/root"
  local e
  for e in "${ENVS[@]}"; do echo "export $(printf %q "$e")"; done
  printf 'exec'; printf ' %q' "$@"; echo
}

if [[ $VNG -eq 1 ]]; then
  command -v vng >/dev/null || die "virtme-ng is not installed: pip install virtme-ng (it also needs udev on the host)"
  boot=$(mktemp -d); trap 'rm -rf "$boot"' EXIT
  cp "$KDIR/config" "$boot/config-$KVER"
  accel=(--disable-kvm); [[ "${SCX_TICK_ACCEL:-}" == kvm ]] && accel=()
  # vng loses output when stdout and stderr go to one regular file: keep them apart.
  vng --run "$KDIR/vmlinuz" "${accel[@]}" --cpus "$CPUS" --memory "${MEM}M" \
    --rodir "/boot=$boot" -- bash -c "$(guest_script "$@")"
  exit $?
fi

# --- the initramfs: busybox + the 9p/overlay modules, rebuilt when this script or the kernel changes
VMDIR="$CACHE_DIR/vm"
mkdir -p "$VMDIR"
KEY=$( { cat "${BASH_SOURCE[0]}"; echo "$KVER"; } | sha256sum | cut -c1-16)
INITRD="$VMDIR/initrd-$KEY.cpio.gz"
MODULES=(netfs 9pnet 9pnet_virtio 9p overlay)

build_initrd() {
  local tmp m path
  tmp=$(mktemp -d)
  mkdir -p "$tmp"/{bin,lib,proc,sys,dev,mnt/root,mnt/out,mnt/rw}
  cp /bin/busybox "$tmp/bin/busybox" 2>/dev/null || die "busybox-static is missing: run scripts/setup.sh"
  for m in "${MODULES[@]}"; do
    path=$(grep -E "/$m\.ko(\.[a-z]+)?:" "$KDIR/modules/modules.dep" | cut -d: -f1)
    [[ -n "$path" ]] || die "module $m not found in the guest kernel"
    case "$path" in
      *.xz) xz -dc "$KDIR/modules/$path" >"$tmp/lib/$m.ko" ;;
      *.zst) zstd -dqc "$KDIR/modules/$path" >"$tmp/lib/$m.ko" ;;
      *) cp "$KDIR/modules/$path" "$tmp/lib/$m.ko" ;;
    esac
  done
  cat >"$tmp/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in ${MODULES[*]}; do insmod /lib/\$m.ko || echo "init: insmod \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /mnt/root || echo "init: host root mount failed"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /mnt/out || echo "init: out mount failed"
mount -t tmpfs tmpfs /mnt/rw
R=/mnt/root
# /tmp too: the caller's working directory may live there (CI clones)
for d in etc var root tmp; do
  mkdir -p /mnt/rw/\$d/up /mnt/rw/\$d/wk
  mount -t overlay overlay -o lowerdir=\$R/\$d,upperdir=/mnt/rw/\$d/up,workdir=/mnt/rw/\$d/wk \$R/\$d
done
mount -t tmpfs tmpfs \$R/run; mount -t tmpfs tmpfs \$R/boot
mount --move /proc \$R/proc; mount --move /sys \$R/sys; mount --move /dev \$R/dev
mkdir -p \$R/run/out; mount --bind /mnt/out \$R/run/out
exec chroot \$R /bin/sh /run/out/guest-init
INIT
  chmod +x "$tmp/init"
  (cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
  mv "$INITRD.tmp" "$INITRD"
  rm -rf "$tmp"
}
if [[ ! -e "$INITRD" ]]; then
  log "building the guest initramfs"
  rm -f "$VMDIR"/initrd-*.cpio.gz
  build_initrd
fi

# --- the per-run directory (second 9p share): guest init, command, results
RUN=$(mktemp -d /tmp/scx_tick-vm.XXXXXX)
QPID="" TAILS=()
cleanup() {
  [[ -n "$QPID" ]] && { kill "$QPID" 2>/dev/null; wait "$QPID" 2>/dev/null; }
  for t in "${TAILS[@]}"; do kill "$t" 2>/dev/null; done
  true
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

guest_script "$@" >"$RUN/cmd.sh"
cat >"$RUN/guest-init" <<GUEST
mkdir -p /dev/pts /sys/fs/bpf /sys/kernel/debug /sys/kernel/tracing /var/run/scx
mount -t devpts devpts /dev/pts
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
cp /run/out/config /boot/config-\$(uname -r)
[ -w /proc/sys/kernel/ftrace_enabled ] && echo 1 >/proc/sys/kernel/ftrace_enabled
ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null
hostname scx-guest
/bin/sh /run/out/cmd.sh >/run/out/stdout 2>/run/out/stderr </dev/null
echo \$? >/run/out/status.tmp && mv /run/out/status.tmp /run/out/status
sync
echo o >/proc/sysrq-trigger
GUEST
cp "$KDIR/config" "$RUN/config"
: >"$RUN/stdout"; : >"$RUN/stderr"

accel() {
  case "${SCX_TICK_ACCEL:-}" in
    kvm) echo kvm; return ;;
    tcg) echo tcg; return ;;
  esac
  # KVM only when a probe boot proved it works here (it fails on PVM hosts
  # with "KVM internal error"); the verdict is cached per machine.
  if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then echo tcg; return; fi
  if [[ ! -e "$VMDIR/kvm-works" ]]; then
    if SCX_TICK_ACCEL=kvm bash "${BASH_SOURCE[0]}" --cpus 1 --timeout 30 -- true >/dev/null 2>&1; then
      echo yes >"$VMDIR/kvm-works"
    else
      echo no >"$VMDIR/kvm-works"
    fi
    log "KVM probe: $(cat "$VMDIR/kvm-works")"
  fi
  if [[ "$(cat "$VMDIR/kvm-works")" == yes ]]; then echo kvm; else echo tcg; fi
}
ACCEL=$(accel)
# One host thread per vCPU (MTTCG): a single thread for all vCPUs would
# round-robin them and blur the very contention the tests compare.
if [[ "$ACCEL" == kvm ]]; then CPU_ARGS=(-accel kvm -cpu host); else CPU_ARGS=(-accel tcg,thread=multi -cpu max); fi

qemu-system-x86_64 "${CPU_ARGS[@]}" -smp "$CPUS" -m "$MEM" -nographic -nodefaults -no-reboot \
  -kernel "$KDIR/vmlinuz" -initrd "$INITRD" \
  -append "console=ttyS0 panic=-1 loglevel=${SCX_TICK_VM_LOGLEVEL:-6} rdinit=/init" \
  -serial "file:$RUN/console.log" -monitor none \
  -fsdev local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap \
  -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
  -fsdev local,id=out,path="$RUN",security_model=none \
  -device virtio-9p-pci,fsdev=out,mount_tag=out \
  >"$RUN/qemu.log" 2>&1 &
QPID=$!

# Stream the command's output live while the guest runs.
tail -n +1 -F --pid="$QPID" "$RUN/stdout" 2>/dev/null & TAILS+=($!)
tail -n +1 -F --pid="$QPID" "$RUN/stderr" >&2 2>/dev/null & TAILS+=($!)

deadline=$((SECONDS + TIMEOUT))
while kill -0 "$QPID" 2>/dev/null && [[ ! -e "$RUN/status" ]] && ((SECONDS < deadline)); do
  sleep 0.2
done
if [[ -e "$RUN/status" ]]; then
  # give the guest a moment to power off, then make sure it is gone
  for _ in $(seq 50); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.1; done
fi
kill "$QPID" 2>/dev/null || true
wait "$QPID" 2>/dev/null || true
QPID=""
for t in "${TAILS[@]}"; do wait "$t" 2>/dev/null || true; done
TAILS=()

[[ $VERBOSE -eq 1 ]] && { echo "--- guest console" >&2; cat "$RUN/console.log" >&2; }
if [[ -e "$RUN/status" ]]; then
  exit "$(cat "$RUN/status")"
fi
if ((SECONDS >= deadline)); then
  echo "[vm.sh] guest did not report: timeout after $TIMEOUT s; console tail:" >&2; code=124
else
  echo "[vm.sh] guest died without reporting a status; qemu: $(tail -3 "$RUN/qemu.log"); console tail:" >&2; code=125
fi
# the first oops or BUG names the cause; the tail shows how it ended
first=$(grep -nE -m1 'BUG:|Oops|WARNING:|Kernel panic' "$RUN/console.log" | cut -d: -f1)
if [[ -n "$first" ]]; then
  echo "[vm.sh] first kernel report (console line $first):" >&2
  sed -n "${first},$((first + 30))p" "$RUN/console.log" >&2
  echo "[vm.sh] console tail:" >&2
fi
tail -n 40 "$RUN/console.log" >&2
exit $code
