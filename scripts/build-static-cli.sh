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
# How: scripts/static-llvm.sh gives llvm-sys LLVM's static libraries through a Cargo
# override; `-no-pie` goes to the final link only (`cargo rustc`). The `dist` profile
# (release settings) keeps these artifacts apart from the release build's, so neither
# rebuilds the other; the first run compiles the dependencies once (~7 minutes on 2
# cores).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/static-llvm.sh
source scripts/static-llvm.sh
out=${1:-$target_dir/dist/broadhead}

cargo rustc --profile dist -p broadhead-cli --bin broadhead "${features[@]}" \
    "${static_llvm_config[@]}" -- -C link-arg=-no-pie
# Copied into place, as `cargo install` does with the binaries it builds: started
# from the file the linker wrote, this 130 MB executable took ~1.5 ms longer to start
# (5.3 ms against 3.8 with `perf stat -r 20 … --version`, reproducibly, also after
# `sync`) than from a copy of it, whose page cache the kernel filled by reading.
cp "$target_dir/dist/broadhead" "$out.copy"
mv -f "$out.copy" "$out"
echo "$out"
