#!/usr/bin/env bash
# Builds the `broadhead` command with LLVM linked statically, as a position-dependent
# (non-PIE) executable, into target/dist/broadhead (or the path given):
#
#   scripts/build-static-cli.sh [OUT]
#   LLVM_VERSION=19 scripts/build-static-cli.sh [OUT]   # against LLVM 19 (default 14)
#
# Why: every other build links libLLVM-NN.so dynamically (the 30+ test binaries link in
# seconds that way). Starting such a process costs ~24 ms of CPU, most of it the dynamic
# loader relocating libLLVM's 355,000 relocations and the copy-on-write page faults
# they cause; a static, non-PIE executable has no relocations left to apply and starts
# in ~5 ms (docs/performance-notes.md, "Process start"). That is what a command line run
# once per query pays on every run.
#
# How: llvm-sys (`links = "llvm-14"`, or `"llvm-19"`) is given its link flags by a Cargo override
# instead of its build script: LLVM's static libraries from llvm-config (those present;
# Polly's are optional), the C wrappers llvm-sys would compile (LLVM_InitializeNative*
# are macros in llvm-c), and the system libraries, and the llvm-config path its build
# script would have exported (codegen's build script reads LLVM's version from it, for
# the kernel cache's key). `-no-pie` goes to the final link only
# (`cargo rustc`). The `dist` profile (release settings) keeps these artifacts apart
# from the release build's, so neither rebuilds the other; the first run compiles the
# dependencies once (~7 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

# The LLVM version: the cargo feature (`llvm19` or `llvm14`) and the llvm-config used.
LLVM_VERSION=${LLVM_VERSION:-14}
case "$LLVM_VERSION" in
    14) features=() ;;
    19) features=(--no-default-features --features llvm19) ;;
    *)
        echo "build-static-cli: LLVM_VERSION must be 19 or 14, not $LLVM_VERSION" >&2
        exit 1
        ;;
esac
LLVM_CONFIG=${LLVM_CONFIG:-$(command -v "llvm-config-$LLVM_VERSION" || command -v llvm-config || true)}
if [[ -z "$LLVM_CONFIG" ]]; then
    echo "build-static-cli: llvm-config-$LLVM_VERSION not found (install llvm-$LLVM_VERSION-dev)" >&2
    exit 1
fi
found=$("$LLVM_CONFIG" --version)
if [[ "${found%%.*}" != "$LLVM_VERSION" ]]; then
    echo "build-static-cli: $LLVM_CONFIG is LLVM $found, not $LLVM_VERSION" >&2
    exit 1
fi
libdir=$("$LLVM_CONFIG" --libdir)

metadata=$(cargo metadata --format-version 1)
target_dir=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")
# The llvm-sys of that LLVM (llvm-sys 140.x for LLVM 14, 191.x for LLVM 19).
llvm_sys_dir=$(LLVM_VERSION=$LLVM_VERSION python3 -c '
import json, os, sys
packages = json.load(sys.stdin)["packages"]
major = os.environ["LLVM_VERSION"]
print(os.path.dirname(next(
    p for p in packages
    if p["name"] == "llvm-sys" and p["version"].split(".")[0][:-1] == major
)["manifest_path"]))
' <<<"$metadata")
out=${1:-$target_dir/dist/broadhead}

work="$target_dir/static-llvm"
mkdir -p "$work"
# shellcheck disable=SC2046 # llvm-config's flags are words.
cc -O2 -c "$llvm_sys_dir/wrappers/target.c" $("$LLVM_CONFIG" --cflags) -o "$work/target.o"
ar rcs "$work/libtargetwrappers.a" "$work/target.o"

# Not bundled into llvm-sys's rlib (`-bundle`): the linker reads LLVM's archives where
# they are instead of a 250 MB copy.
libs="'static:-bundle=targetwrappers'"
for flag in $("$LLVM_CONFIG" --link-static --libs); do
    name=${flag#-l}
    [[ -f "$libdir/lib$name.a" ]] && libs+=", 'static:-bundle=$name'"
done
for flag in $("$LLVM_CONFIG" --link-static --system-libs) -lstdc++; do
    name=${flag#-l}
    name=${name##*/lib}
    libs+=", 'dylib=${name%%.so*}'"
done
override="target.$(rustc -vV | sed -n 's/^host: //p').llvm-$LLVM_VERSION"

cargo rustc --profile dist -p broadhead-cli --bin broadhead "${features[@]}" \
    --config "$override.rustc-link-search=['native=$libdir', 'native=$work']" \
    --config "$override.rustc-link-lib=[$libs]" \
    --config "$override.config_path='$LLVM_CONFIG'" \
    -- -C link-arg=-no-pie
# Copied into place, as `cargo install` does with the binaries it builds: started
# from the file the linker wrote, this 130 MB executable took ~1.5 ms longer to start
# (5.3 ms against 3.8 with `perf stat -r 20 … --version`, reproducibly, also after
# `sync`) than from a copy of it, whose page cache the kernel filled by reading.
cp "$target_dir/dist/broadhead" "$out.copy"
mv -f "$out.copy" "$out"
echo "$out"
