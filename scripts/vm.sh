#!/usr/bin/env bash
# Run one command inside a throw-away guest booted with the sched_ext kernel
# that scripts/setup.sh unpacked. The guest sees the host's root read-only
# (9p) with writable tmpfs overlays (/etc /var /root /tmp at least), has
# cgroup2, bpf, debugfs and tracefs mounted and the kernel config in /boot,
# and runs the command as root in the caller's working directory.
#
#   scripts/vm.sh [--cpus N] [--mem MB] [--timeout SECS] [--env NAME=VALUE]...
#                 [--topology SMP] [--nodes N] [--systemd] [--kernel current|oldest]
#                 [--verbose] [--vng] -- COMMAND [ARGS...]
#
# --topology gives the guest a host's shape: QEMU's -smp keys after the CPU
# count, e.g. sockets=2,cores=2,threads=2 (SMT siblings, two packages) or
# maxcpus=8 (possible CPUs beyond the online ones); --nodes N splits the
# CPUs (in order, evenly) and the memory into N NUMA nodes. Plain QEMU only.
# --kernel oldest (or SCX_TICK_KERNEL=oldest) boots the oldest sched_ext
# kernel scripts/setup.sh unpacked instead of the current one (plain QEMU
# only): the suite's oldest/ scenarios run there.
# --systemd boots the host's systemd as the guest's PID 1 (plain QEMU only)
# and runs the command as a oneshot unit once the system is up, so a
# scenario can use systemctl and journalctl as an operator would; the
# guest powers off when the unit ends.
#
# The command's stdout and stderr stream back live, separately. Exit status:
#   the command's own, or
#   124  the guest did not report within --timeout (console tail printed)
#   125  the guest died without reporting (panic, qemu error; console tail printed)
#   123  the guest kernel did not reach userspace within SCX_TICK_BOOT_LIMIT_S
#        (default 150; a boot takes 15-20 s): an emulator hang during boot,
#        before anything of the command ran (console tail printed)
# SCX_TICK_ACCEL=kvm|tcg forces the accelerator; by default KVM is used only
# when a probe boot showed it works (it does not on PVM hosts).
# --vng (or SCX_TICK_VM=vng) boots the guest with virtme-ng instead of our
# own QEMU command line and busybox init; same contract. scripts/setup.sh
# installs the pinned virtme-ng; SCX_TICK_VNG=/path/to/vng picks another.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/common.sh"

case "${SCX_TICK_VM:-qemu}" in
  qemu|"") VNG=0 ;;
  vng) VNG=1 ;;
  *) die "SCX_TICK_VM=$SCX_TICK_VM: must be qemu (the default) or vng" ;;
esac
CPUS=4 MEM=2048 TIMEOUT=600 VERBOSE=0 ENVS=() TOPOLOGY="" NODES=1 SYSTEMD=0 KERNEL=${SCX_TICK_KERNEL:-current}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --cpus) CPUS=$2; shift 2 ;;
    --mem) MEM=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --env) ENVS+=("$2"); shift 2 ;;
    --topology) TOPOLOGY=$2; shift 2 ;;
    --nodes) NODES=$2; shift 2 ;;
    --systemd) SYSTEMD=1; shift ;;
    --kernel) KERNEL=$2; shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    --vng) VNG=1; shift ;;
    --) shift; break ;;
    *) die "vm.sh: unknown option $1 (usage: vm.sh [--cpus N] [--mem MB] [--timeout S] [--env K=V] [--topology SMP] [--nodes N] [--systemd] [--kernel current|oldest] [--verbose] [--vng] -- CMD...)" ;;
  esac
done
[[ $# -gt 0 ]] || die "vm.sh: no command given (usage: vm.sh [options] -- CMD...)"
[[ "$TOPOLOGY" =~ ^([a-z]+=[0-9]+)(,[a-z]+=[0-9]+)*$ || -z "$TOPOLOGY" ]] ||
  die "vm.sh: --topology $TOPOLOGY: want QEMU -smp keys such as sockets=2,cores=2,threads=2 or maxcpus=8"
[[ "$NODES" =~ ^[1-9][0-9]*$ ]] && ((CPUS % NODES == 0 && MEM % NODES == 0)) ||
  die "vm.sh: --nodes $NODES: want a count that divides the CPUs ($CPUS) and the memory ($MEM MB)"
[[ "$KERNEL" == current || "$KERNEL" == oldest ]] || die "vm.sh: --kernel $KERNEL: allowed: current, oldest"
[[ $VNG -eq 0 || ( -z "$TOPOLOGY" && $NODES -eq 1 && $SYSTEMD -eq 0 && $KERNEL == current ) ]] || die "vm.sh: --topology, --nodes, --systemd and --kernel oldest are for plain QEMU guests, not --vng"
[[ $SYSTEMD -eq 0 || -x /lib/systemd/systemd ]] || die "vm.sh: --systemd needs systemd on the host (apt-get install systemd; scripts/setup.sh does)"
SMP=("$CPUS${TOPOLOGY:+,$TOPOLOGY}")
NUMA_ARGS=()
for ((n = 0; NODES > 1 && n < NODES; n++)); do
  NUMA_ARGS+=(-object "memory-backend-ram,id=mem$n,size=$((MEM / NODES))M"
    -numa "node,nodeid=$n,memdev=mem$n,cpus=$((n * CPUS / NODES))-$(((n + 1) * CPUS / NODES - 1))")
done

KDIR="$KERNEL_CACHE/$KERNEL"
[[ -e "$KDIR/vmlinuz" ]] || die "no guest kernel in $KDIR: run scripts/setup.sh first"
KVER="$(basename "$(readlink -f "$KDIR/modules")")"
ENVS+=("SCX_TICK_KERNEL=$KERNEL") # the scenario knows which kernel it is on
for v in RUST_LOG RUST_BACKTRACE; do [[ -n "${!v:-}" ]] && ENVS+=("$v=${!v}"); done

# The caller's PATH without version managers' shims (pyenv's, rbenv's:
# a directory named shims): each call of a shim is a bash program that
# picks a version, and python3 through pyenv's took 4-7 s to start in the
# emulated guest against 0.2-1.4 s for the distribution's /usr/bin/python3
# (2026-11-30; every scenario analyses its run with python3).
guest_path() {
  local d out=""
  local IFS=:
  for d in $PATH; do [[ $d == */shims ]] || out+="${out:+:}$d"; done
  echo "$out:/usr/sbin:/sbin"
}

# The command, quoted for the guest shell, with the caller's cwd and PATH.
guest_script() {
  echo "cd $(printf %q "$PWD") || { echo \"vm.sh: $PWD is not visible in the guest\" >&2; exit 126; }"
  echo "export PATH=$(printf %q "$(guest_path)") HOME=/root"
  local e
  for e in "${ENVS[@]}"; do echo "export $(printf %q "$e")"; done
  printf 'exec'; printf ' %q' "$@"; echo
}

VMDIR="$CACHE_DIR/vm"
mkdir -p "$VMDIR"

accel() {
  case "${SCX_TICK_ACCEL:-}" in
    kvm) echo kvm; return ;;
    tcg) echo tcg; return ;;
  esac
  # KVM only when a probe boot proved it works here (it fails on PVM hosts
  # with "KVM internal error"); the verdict is cached per machine and holds
  # for both runners (the probe is a plain QEMU boot, the faster one).
  if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then echo tcg; return; fi
  if [[ ! -e "$VMDIR/kvm-works" ]]; then
    if SCX_TICK_ACCEL=kvm SCX_TICK_VM=qemu bash "${BASH_SOURCE[0]}" --cpus 1 --timeout 30 -- true >/dev/null 2>&1; then
      echo yes >"$VMDIR/kvm-works"
    else
      echo no >"$VMDIR/kvm-works"
    fi
    log "KVM probe: $(cat "$VMDIR/kvm-works")"
  fi
  if [[ "$(cat "$VMDIR/kvm-works")" == yes ]]; then echo kvm; else echo tcg; fi
}

# --- plain QEMU: the initramfs (busybox + the 9p/overlay modules), rebuilt
# when this script or the kernel changes
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
# /tmp too: the caller's working directory may live there (CI clones);
# /usr/local: where an operator installs scx_tick
for d in etc var root tmp usr/local; do
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
if [[ $VNG -eq 0 && ! -e "$INITRD" ]]; then
  log "building the guest initramfs"
  # Other checkouts share this cache and may boot their own initramfs right
  # now: remove only old ones.
  find "$VMDIR" -name 'initrd-*.cpio.gz' -mmin +1440 -delete 2>/dev/null || true
  build_initrd
fi

# --- virtme-ng: which vng, and the kernel image it must be given
if [[ $VNG -eq 1 ]]; then
  VNG_BIN="${SCX_TICK_VNG:-}"
  [[ -z "$VNG_BIN" && -x "$VNG_VENV/bin/vng" ]] && VNG_BIN="$VNG_VENV/bin/vng"
  [[ -z "$VNG_BIN" ]] && VNG_BIN=$(command -v vng || true)
  [[ -n "$VNG_BIN" ]] || die "virtme-ng is not installed: run scripts/setup.sh (it installs virtme-ng $VNG_VERSION into $VNG_VENV)"
  # vng needs the host's udevd: in the guest it creates the virtio-port
  # links the command's stdout, stderr and exit status travel through
  # (without it vng exits 255 and prints nothing).
  [[ -x /lib/systemd/systemd-udevd || -x /usr/lib/systemd/systemd-udevd ]] \
    || die "virtme-ng needs udev on the host (apt-get install udev; scripts/setup.sh does)"
  # vng finds the kernel's modules (9p and overlayfs are modules) only next to
  # the image it boots: give it the real .../lib/modules/VERSION/vmlinuz, not
  # the cache's current/ symlink (through which the guest cannot mount its root).
  KIMG=$(readlink -f "$KDIR/vmlinuz")
  [[ "$KIMG" == */lib/modules/"$KVER"/vmlinuz ]] \
    || die "virtme-ng needs the kernel image inside its modules directory; $KIMG is not .../lib/modules/$KVER/vmlinuz (re-run scripts/setup.sh)"
  # vng hands its options to a shell unquoted
  [[ "$KIMG" != *[[:space:]]* ]] || die "virtme-ng cannot boot a kernel whose path has spaces: $KIMG (set SCX_TICK_CACHE to a path without)"
fi

# --- the per-run directory (shared with the guest): guest init, command,
# kernel config, exit status, console log
RUN=$(mktemp -d /tmp/scx_tick-vm.XXXXXX)
VMPID="" TAILS=()
stop_vm() {
  # the vng process group (vng, virtme-run, qemu) or the qemu process
  if [[ $VNG -eq 1 ]]; then kill -TERM -- "-$VMPID" 2>/dev/null || true; else kill "$VMPID" 2>/dev/null || true; fi
}
cleanup() {
  [[ -n "$VMPID" ]] && { stop_vm; wait "$VMPID" 2>/dev/null || true; }
  for t in "${TAILS[@]}"; do kill "$t" 2>/dev/null || true; done
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

guest_script "$@" >"$RUN/cmd.sh"
cp "$KDIR/config" "$RUN/config"
ACCEL=$(accel)

# How a plain QEMU guest (busybox or systemd init) runs the command and
# reports its exit status to the host (the per-run directory is /run/out)
RUN_COMMAND='[ -w /proc/sys/kernel/ftrace_enabled ] && echo 1 >/proc/sys/kernel/ftrace_enabled
/bin/sh /run/out/cmd.sh >/run/out/stdout 2>/run/out/stderr </dev/null
echo $? >/run/out/status.tmp && mv /run/out/status.tmp /run/out/status
sync'
if [[ $VNG -eq 0 && $SYSTEMD -eq 1 ]]; then
  # systemd mounts what it needs itself (cgroup2, bpf, debugfs, tracefs,
  # devpts) and runs the command as a unit after sysinit; the unit's end
  # powers the guest off. Its target is that unit, not multi-user.target:
  # services the host has enabled (prometheus, minetest-server) stay off.
  # "booted" means the kernel reached userspace; a hang in systemd's own
  # start ends in --timeout (124).
  cat >"$RUN/guest-init" <<GUEST
: >/run/out/booted
cp /run/out/config /boot/config-\$(uname -r)
# the host's root looks like a container to systemd (/.dockerenv), which
# then leaves bpffs unmounted; and its boot-time clean of /tmp would hide
# the host's /tmp (where CI clones live) in the overlay
mkdir -p /etc/tmpfiles.d && echo 'd /tmp 1777 root root -' >/etc/tmpfiles.d/tmp.conf
cat >/etc/vm-command.sh <<'CMD'
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
mkdir -p /var/run/scx
$RUN_COMMAND
CMD
cat >/etc/systemd/system/vm-command.service <<'UNIT'
[Unit]
Description=the command scripts/vm.sh was given
SuccessAction=poweroff-force
FailureAction=poweroff-force
[Service]
Type=oneshot
TimeoutStartSec=infinity
ExecStart=/bin/sh /etc/vm-command.sh
UNIT
echo scx-guest >/etc/hostname
exec /lib/systemd/systemd --unit=vm-command.service
GUEST
elif [[ $VNG -eq 0 ]]; then
  cat >"$RUN/guest-init" <<GUEST
: >/run/out/booted
mkdir -p /dev/pts /sys/fs/bpf /sys/kernel/debug /sys/kernel/tracing /var/run/scx
mount -t devpts devpts /dev/pts
mount -t bpf bpf /sys/fs/bpf
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
cp /run/out/config /boot/config-\$(uname -r)
ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null
hostname scx-guest
$RUN_COMMAND
echo o >/proc/sysrq-trigger
GUEST
fi
if [[ $VNG -eq 0 ]]; then
  : >"$RUN/stdout"; : >"$RUN/stderr"
  # One host thread per vCPU (MTTCG): a single thread for all vCPUs would
  # round-robin them and blur the very contention the tests compare.
  if [[ "$ACCEL" == kvm ]]; then CPU_ARGS=(-accel kvm -cpu host); else CPU_ARGS=(-accel tcg,thread=multi -cpu max); fi

  qemu-system-x86_64 "${CPU_ARGS[@]}" -smp "${SMP[0]}" "${NUMA_ARGS[@]}" -m "$MEM" -nographic -nodefaults -no-reboot \
    -kernel "$KDIR/vmlinuz" -initrd "$INITRD" \
    -append "console=ttyS0 panic=-1 loglevel=${SCX_TICK_VM_LOGLEVEL:-6} rdinit=/init" \
    -serial "file:$RUN/console.log" -monitor none \
    -fsdev local,id=hostroot,path=/,readonly=on,security_model=none,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -fsdev local,id=out,path="$RUN",security_model=none \
    -device virtio-9p-pci,fsdev=out,mount_tag=out \
    >"$RUN/qemu.log" 2>&1 &
  VMPID=$!

  # Stream the command's output live while the guest runs.
  tail -n +1 -F --pid="$VMPID" "$RUN/stdout" 2>/dev/null & TAILS+=($!)
  tail -n +1 -F --pid="$VMPID" "$RUN/stderr" >&2 2>/dev/null & TAILS+=($!)
  POWEROFF_WAIT=5
else
  # virtme-ng's init mounts cgroup2, debugfs and tracefs and overlays /etc
  # /var /tmp...; the rest of what the plain guest has is mounted here. The
  # command's stdout and stderr are the guest's virtio ports to vng's own.
  cat >"$RUN/guest-init" <<GUEST
: >$RUN/booted
have() { grep -q " \$2 \$1 " /proc/mounts; }
mnt() { have "\$1" "\$2" || { mkdir -p "\$2"; mount -t "\$1" "\$1" "\$2"; } || echo "vm.sh: cannot mount \$1 on \$2" >&2; }
mnt bpf /sys/fs/bpf
mnt debugfs /sys/kernel/debug
mnt tracefs /sys/kernel/tracing
mnt cgroup2 /sys/fs/cgroup
have devpts /dev/pts || mount -t devpts devpts /dev/pts
mkdir -p /var/run/scx
# libbpf reads the running kernel's config from /boot (read-only host root)
mount -t tmpfs tmpfs /boot && cp $RUN/config /boot/config-\$(uname -r)
# a writable /root that still shows the host's (as in the plain guest)
if ! touch /root/.scx_tick_w 2>/dev/null; then
  mkdir -p /run/scx_tick_root/up /run/scx_tick_root/wk
  mount -t overlay overlay -o lowerdir=/root,upperdir=/run/scx_tick_root/up,workdir=/run/scx_tick_root/wk /root
fi
rm -f /root/.scx_tick_w
[ -w /proc/sys/kernel/ftrace_enabled ] && echo 1 >/proc/sys/kernel/ftrace_enabled
ip link set lo up 2>/dev/null || busybox ip link set lo up 2>/dev/null
/bin/sh $RUN/cmd.sh </dev/null
echo \$? >$RUN/status.tmp && mv $RUN/status.tmp $RUN/status
GUEST
  vng_args=(--run "$KIMG" --name scx-guest --cpus "$CPUS" --memory "${MEM}M" --rwdir "$RUN")
  # vng sends the kernel console (ttyS0) to /dev/null, and 8250 serves one
  # console only: a virtio console (hvc0) copies the kernel log to a file,
  # for the 124/125 reports
  vng_args+=(--append "console=hvc0" --append "loglevel=${SCX_TICK_VM_LOGLEVEL:-6}")
  qemu_opts="-device virtio-serial-pci,id=klog -chardev file,id=klog,path=$RUN/console.log"
  qemu_opts+=" -device virtconsole,bus=klog.0,chardev=klog"
  # MTTCG as in the plain guest (see above); KVM when the probe allows it
  if [[ "$ACCEL" == kvm ]]; then
    [[ -r /dev/kvm && -w /dev/kvm ]] || die "SCX_TICK_ACCEL=kvm but /dev/kvm is not usable"
  else
    vng_args+=(--disable-kvm); qemu_opts+=" -accel tcg,thread=multi"
  fi
  # vng joins positional words with spaces: the script goes in as one --exec
  vng_args+=("--qemu-opts=$qemu_opts" --exec "/bin/sh $RUN/guest-init")
  # vng loses output when stdout and stderr are one regular file (qemu
  # reopens each): give it two pipes and copy them to ours.
  mkfifo "$RUN/out.fifo" "$RUN/err.fifo"
  cat "$RUN/out.fifo" & TAILS+=($!)
  cat "$RUN/err.fifo" >&2 & TAILS+=($!)
  # its own process group, so a timeout ends vng, virtme-run and qemu at once;
  # vng runs virtme-run from its own bin directory
  PATH="$(dirname "$VNG_BIN"):$PATH" setsid "$VNG_BIN" "${vng_args[@]}" \
    </dev/null >"$RUN/out.fifo" 2>"$RUN/err.fifo" &
  VMPID=$!
  POWEROFF_WAIT=60
fi

deadline=$((SECONDS + TIMEOUT)) boot_deadline=$((SECONDS + ${SCX_TICK_BOOT_LIMIT_S:-150})) boot_hang=0
while kill -0 "$VMPID" 2>/dev/null && [[ ! -e "$RUN/status" ]] && ((SECONDS < deadline)); do
  if [[ ! -e "$RUN/booted" ]] && ((SECONDS >= boot_deadline)); then boot_hang=1; break; fi
  sleep 0.2
done
if [[ -e "$RUN/status" ]]; then
  # give the guest a moment to power off (vng: to pass on the last output),
  # then make sure it is gone
  for _ in $(seq $((POWEROFF_WAIT * 10))); do kill -0 "$VMPID" 2>/dev/null || break; sleep 0.1; done
fi
stop_vm
wait "$VMPID" 2>/dev/null && vm_rc=0 || vm_rc=$?
VMPID=""
for t in "${TAILS[@]}"; do wait "$t" 2>/dev/null || true; done
TAILS=()

[[ $VERBOSE -eq 1 ]] && { echo "--- guest console" >&2; cat "$RUN/console.log" >&2 2>/dev/null; }
if [[ -e "$RUN/status" ]]; then
  exit "$(cat "$RUN/status")"
fi
if ((boot_hang)); then
  echo "[vm.sh] guest kernel did not reach userspace within ${SCX_TICK_BOOT_LIMIT_S:-150} s (a boot hang); console tail:" >&2; code=123
elif ((SECONDS >= deadline)); then
  echo "[vm.sh] guest did not report: timeout after $TIMEOUT s; console tail:" >&2; code=124
elif [[ $VNG -eq 1 ]]; then
  echo "[vm.sh] guest died without reporting a status; vng exit status $vm_rc; console tail:" >&2; code=125
else
  echo "[vm.sh] guest died without reporting a status; qemu: $(tail -3 "$RUN/qemu.log"); console tail:" >&2; code=125
fi
touch "$RUN/console.log"
# the first oops or BUG names the cause; the tail shows how it ended
first=$(grep -nE -m1 'BUG:|Oops|WARNING:|Kernel panic' "$RUN/console.log" | cut -d: -f1 || true)
if [[ -n "$first" ]]; then
  echo "[vm.sh] first kernel report (console line $first):" >&2
  sed -n "${first},$((first + 30))p" "$RUN/console.log" >&2
  echo "[vm.sh] console tail:" >&2
fi
tail -n 40 "$RUN/console.log" >&2
exit $code
