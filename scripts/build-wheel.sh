#!/usr/bin/env bash
# Builds the Python package's wheel (python/) with LLVM linked statically into the
# extension, so that it runs on machines without libLLVM, into target/wheels (or the
# directory given); prints the wheel's path:
#
#   scripts/build-wheel.sh [OUT_DIR]
#
# It needs maturin (`pip install maturin`) and LLVM 14's development files, as the
# Rust build does. `pip install ./python` builds the same package with LLVM linked
# dynamically (libLLVM-14.so, there on any machine that can build it). The `dist`
# profile is the static command line's (scripts/build-static-cli.sh): the two share
# their compiled dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/static-llvm.sh
source scripts/static-llvm.sh
out=${1:-$target_dir/wheels}
mkdir -p "$out"

# maturin bundles the extension's shared libraries beyond the manylinux set
# (libffi, libtinfo, which LLVM needs) with patchelf, which rewrites the library
# cargo linked in place: a later run with nothing to rebuild would find it already
# rewritten and fail. Removing it makes cargo link it again (seconds).
rm -f "$target_dir"/dist/deps/lib_native.so "$target_dir"/dist/lib_native.so "$target_dir"/maturin/lib_native.so

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! maturin build --profile dist --manifest-path python/Cargo.toml --out "$out" \
    "${features[@]}" "${static_llvm_config[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
wheel=$(sed -n 's/.*Built wheel for .* to \(.*\.whl\)$/\1/p' "$log" | tail -1)
if [[ -z "$wheel" ]]; then
    cat "$log" >&2
    echo "build-wheel: maturin named no wheel" >&2
    exit 1
fi
echo "$wheel"
