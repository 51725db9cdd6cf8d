#!/usr/bin/env bash
# The Python package's tests: builds the wheel as it ships (scripts/build-wheel.sh,
# LLVM linked statically), installs it into a venv of its own (target/python-venv,
# or $BROADHEAD_VENV) with python/requirements-test.txt, checks that the extension
# needs no libLLVM, and runs pytest on python/tests and the package's doctests.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
venv=${BROADHEAD_VENV:-$target_dir/python-venv}
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-test.txt

wheel=$(PATH="$venv/bin:$PATH" scripts/build-wheel.sh)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
echo "wheel: $wheel ($(du -h "$wheel" | cut -f1))"

# The installed extension, not the sources (python/broadhead has no extension unless
# `maturin develop` put one there).
extension=$(cd / && "$venv/bin/python" -c 'import broadhead._native as m; print(m.__file__)')
case "$extension" in
    "$venv"/*) ;;
    *)
        echo "test-python: broadhead was imported from $extension, not the venv" >&2
        exit 1
        ;;
esac
if readelf -d "$extension" | grep -q 'NEEDED.*libLLVM'; then
    echo "test-python: $extension links libLLVM dynamically" >&2
    exit 1
fi
(cd / && "$venv/bin/python" -X importtime -c 'import pyarrow; import broadhead' 2>&1 |
    awk -F'|' '$3 ~ /^ broadhead$/ { printf "import broadhead: %.1f ms (after pyarrow)\n", $2 / 1000 }')

# From the repository's root, so that python/ (the sources) is not on sys.path;
# pytest exits non-zero when it collects no test.
"$venv/bin/python" -m pytest --import-mode=importlib -p no:cacheprovider python/tests "$@"
(cd / && "$venv/bin/python" -m pytest -p no:cacheprovider --doctest-modules --pyargs broadhead -q)
