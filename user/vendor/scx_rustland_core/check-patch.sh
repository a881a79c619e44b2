#!/usr/bin/env bash
# Checks that scx_rustland_core.patch, applied to the pristine crate's files
# (cargo's registry copy of the version in Cargo.lock), gives exactly the
# files vendored here; run by `cargo test -p scx_tick_user` (tests/vendored.rs).
#
#   user/vendor/scx_rustland_core/check-patch.sh          check
#   user/vendor/scx_rustland_core/check-patch.sh --write  rewrite the patch
#                                                         from the files here
#
# Exit 0 = they match, 77 = no registry copy to check against, else not.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOCK="$HERE/../../../Cargo.lock"
PATCH="$HERE/scx_rustland_core.patch"
# Each vendored file and where it is in the crate (rustland's builder writes
# assets/bpf.rs into the scheduler's crate as src/bpf.rs).
FILES=(bpf/intf.h:assets/bpf/intf.h bpf/main.bpf.c:assets/bpf/main.bpf.c
  src/bpf.rs:assets/bpf.rs src/bpf_intf.rs:src/bpf_intf.rs src/bpf_skel.rs:src/bpf_skel.rs)

# The version the workspace builds against, and the one vendored here (the
# patch's first line names it): a version bump must re-vendor.
version=$(awk '/^name = "scx_rustland_core"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' "$LOCK")
vendored=$(head -1 "$PATCH" | grep -o 'scx_rustland_core [0-9.]*' | cut -d' ' -f2)
if [[ -z "$version" || "$version" != "$vendored" ]]; then
  echo "check-patch.sh: Cargo.lock has scx_rustland_core ${version:-?}, the files here are of ${vendored:-?}: re-vendor them (README.md)" >&2
  exit 1
fi
crate=""
for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"scx_rustland_core-$version"; do
  [[ -f "$d/assets/bpf/main.bpf.c" ]] && crate=$d
done
if [[ -z "$crate" ]]; then
  echo "check-patch.sh: no registry copy of scx_rustland_core $version (cargo fetch): not checked" >&2
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a/bpf" "$work/a/src"
for f in "${FILES[@]}"; do cp "$crate/${f#*:}" "$work/a/${f%%:*}"; done

if [[ ${1:-} == --write ]]; then
  {
    head -1 "$PATCH"
    sed -n '2,/^$/p' "$PATCH"
    for f in "${FILES[@]}"; do
      diff -u --label "a/${f%%:*}" --label "b/${f%%:*}" "$work/a/${f%%:*}" "$HERE/${f%%:*}" || true
    done
  } >"$work/patch"
  mv "$work/patch" "$PATCH"
  echo "check-patch.sh: wrote $PATCH"
  exit 0
fi

(cd "$work/a" && patch -p1 --quiet --no-backup-if-mismatch <"$PATCH")
bad=0
for f in "${FILES[@]}"; do
  if ! cmp -s "$work/a/${f%%:*}" "$HERE/${f%%:*}"; then
    echo "check-patch.sh: ${f%%:*} is not scx_rustland_core $version's ${f#*:} with the patch:" >&2
    diff -u "$work/a/${f%%:*}" "$HERE/${f%%:*}" >&2 || true
    bad=1
  fi
done
[[ $bad -eq 0 ]] && echo "check-patch.sh: the vendored files are scx_rustland_core $version with scx_rustland_core.patch"
exit $bad
