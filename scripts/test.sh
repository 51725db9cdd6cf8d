#!/usr/bin/env bash
# Every test: the Rust workspace's (`cargo test --workspace`) and the Python
# package's (scripts/test-python.sh: pytest against the wheel as it ships).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
scripts/test-python.sh
