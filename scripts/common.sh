# Shared by the scripts: paths and small helpers. Sourced, not run.
CACHE_DIR="${SCX_TICK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/scx_tick}"
KERNEL_CACHE="$CACHE_DIR/kernel"
RUST_MIN=1.91
# virtme-ng (vm.sh --vng), pinned: scripts/setup.sh installs it into a venv
# of its own here, so the system's Python is never touched.
VNG_VERSION=1.42
VNG_VENV="$CACHE_DIR/virtme-ng-$VNG_VERSION"
export BPF_CLANG="${BPF_CLANG:-clang-19}"

log() { echo "[scx_tick] $*" >&2; }
die() { echo "[scx_tick] error: $*" >&2; exit 1; }
