# Sourced by the scripts that link LLVM statically (build-static-cli.sh, and
# build-wheel.sh for the Python extension), from the repository's root, with
# LLVM_VERSION (14 or 19; default 14) and optionally LLVM_CONFIG set. It sets:
#   features             the cargo feature arguments of that LLVM version;
#   target_dir           the workspace's target directory;
#   static_llvm_config   cargo `--config` arguments that link LLVM statically.
#
# How: llvm-sys (`links = "llvm-14"`, or `"llvm-19"`) is given its link flags by a
# Cargo override instead of its build script: LLVM's static libraries from
# llvm-config (those present; Polly's are optional), the C wrappers llvm-sys would
# compile (LLVM_InitializeNative* are macros in llvm-c; compiled position-independent,
# so they link into the shared Python extension too), and the system libraries, and
# the llvm-config path its build script would have exported (codegen's build script
# reads LLVM's version from it, for the kernel cache's key).

# The LLVM version: the cargo feature (`llvm19` or `llvm14`) and the llvm-config used.
LLVM_VERSION=${LLVM_VERSION:-14}
case "$LLVM_VERSION" in
    14) features=() ;;
    19) features=(--no-default-features --features llvm19) ;;
    *)
        echo "${0##*/}: LLVM_VERSION must be 19 or 14, not $LLVM_VERSION" >&2
        exit 1
        ;;
esac
LLVM_CONFIG=${LLVM_CONFIG:-$(command -v "llvm-config-$LLVM_VERSION" || command -v llvm-config || true)}
if [[ -z "$LLVM_CONFIG" ]]; then
    echo "${0##*/}: llvm-config-$LLVM_VERSION not found (install llvm-$LLVM_VERSION-dev)" >&2
    exit 1
fi
found=$("$LLVM_CONFIG" --version)
if [[ "${found%%.*}" != "$LLVM_VERSION" ]]; then
    echo "${0##*/}: $LLVM_CONFIG is LLVM $found, not $LLVM_VERSION" >&2
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

work="$target_dir/static-llvm"
mkdir -p "$work"
# shellcheck disable=SC2046 # llvm-config's flags are words.
cc -O2 -fPIC -c "$llvm_sys_dir/wrappers/target.c" $("$LLVM_CONFIG" --cflags) -o "$work/target.o"
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
static_llvm_config=(
    --config "$override.rustc-link-search=['native=$libdir', 'native=$work']"
    --config "$override.rustc-link-lib=[$libs]"
    --config "$override.config_path='$LLVM_CONFIG'"
)
