#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs on a machine with a real GPU, which
# cannot reach package registries or build anything: into gpu-check/ (ignored
# by git; about 19 MB of the 64 MiB a device session may carry)
#   bin/qsweep.gz              the CLI,
#   bin/it.gz                  the integration-test binary (tests/it/), whose
#                              GPU tests the check runs (gpu_matches_cpu::,
#                              theory::, dynamic::: the dispatch kernel),
#                              stripped and gzipped;
#   lib/libvulkan.so.1         this machine's Vulkan loader (Debian libvulkan1),
#                              used there only when the image has none;
#   bin/BUILD-INFO             revision, profile, toolchain, this machine's glibc
#                              and the newest GLIBC_x.y symbol version the
#                              binaries and the loader need (the check refuses
#                              an older glibc with one FAIL line).
# Usage: scripts/build-gpu-check.sh [--profile release|dev|test] (default release)
# `--profile test` (opt-level 3 in this project, as dev) reuses what `cargo
# test` built in target/debug, the qsweep library and binary included (dev
# would compile both again); CI builds it so. Then carry gpu-check/ and run
# `OUT=dir scripts/gpu-check.sh` there (docs/backends.md, "Checking a real GPU").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

profile=release
while [ $# -gt 0 ]; do
    case $1 in
    --profile) profile=${2:?--profile needs a value}; shift 2 ;;
    --profile=*) profile=${1#--profile=}; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "build-gpu-check: unknown argument $1 (usage: $0 [--profile release|dev|test])" >&2; exit 2 ;;
    esac
done

root=gpu-check
bin=$root/bin
lib=$root/lib
rm -rf "$bin" "$lib"
mkdir -p "$bin" "$lib"

# Cargo names each artifact's file (test binaries carry a hash): take the
# path from its JSON messages. Build errors still reach stderr.
executable() { # executable NAME < cargo's JSON messages
    sed -n 's/.*"executable":"\([^"]*\/'"$1"'\(-[0-9a-f]*\)\{0,1\}\)".*/\1/p' | tail -n 1
}
# Stripped and gzipped (a third of the size; gpu-check.sh unpacks them into
# a temporary directory).
pack() { # pack BINARY NAME
    if command -v strip >/dev/null; then
        strip -o "$bin/$2" "$1"
    else
        echo "build-gpu-check: no strip (binutils); $2 carried unstripped" >&2
        cp "$1" "$bin/$2"
    fi
    gzip -9 -n "$bin/$2"
}
# One `cargo test` build gives both: the integration tests are built with
# the CLI binary they run (CARGO_BIN_EXE_qsweep), with the dev-dependencies'
# features, so the binary is the one `cargo test` built (`cargo build` would
# resolve features without the dev-dependencies and compile it again).
tests=(it)
test_args=()
for t in "${tests[@]}"; do test_args+=(--test "$t"); done
json=$(cargo test --profile "$profile" "${test_args[@]}" --no-run --message-format=json)
qsweep=$(grep '"kind":\["bin"\]' <<<"$json" | executable qsweep)
[ -x "$qsweep" ] || { echo "build-gpu-check: cargo named no qsweep binary" >&2; exit 1; }
pack "$qsweep" qsweep
built=("$qsweep")
for t in "${tests[@]}"; do
    exe=$(executable "$t" <<<"$json")
    [ -x "$exe" ] || { echo "build-gpu-check: cargo named no $t test binary" >&2; exit 1; }
    pack "$exe" "$t"
    built+=("$exe")
done

# The Vulkan loader: the real file behind libvulkan.so.1, renamed to its soname.
loader=$( (ldconfig -p 2>/dev/null || true) | awk '$1 == "libvulkan.so.1" && /x86-64/ && !found { print $NF; found = 1 }')
[ -n "$loader" ] || loader=$(ls /usr/lib/x86_64-linux-gnu/libvulkan.so.1 /usr/lib64/libvulkan.so.1 2>/dev/null | head -n 1)
[ -n "$loader" ] || {
    echo "build-gpu-check: no Vulkan loader here to carry (apt-get install libvulkan1)" >&2
    exit 1
}
loader_file=$(readlink -f "$loader")
cp "$loader_file" "$lib/libvulkan.so.1"

# The newest glibc symbol version anything carried asks for.
glibc_required=$(for f in "${built[@]}" "$lib/libvulkan.so.1"; do objdump -T "$f"; done 2>/dev/null |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
glibc_build=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
[ -n "$glibc_build" ] || glibc_build=$(ldd --version 2>&1 | awk 'NR == 1 { print $NF }')
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    revision="$revision+uncommitted"
fi
{
    echo "revision=$revision"
    echo "profile=$profile"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "rustc=$(rustc -V)"
    echo "build_machine=$(uname -srm)"
    echo "build_ldd=$(ldd --version 2>&1 | head -n 1)"
    echo "glibc_build=$glibc_build"
    echo "glibc_required=${glibc_required:-$glibc_build}"
    echo "vulkan_loader=$loader_file"
} > "$bin/BUILD-INFO"
cat "$bin/BUILD-INFO"

ls -l "$bin" "$lib" | awk 'NF >= 9 { printf "%10d  %s\n", $5, $NF }'
bytes=$(cat "$bin"/* "$lib"/* | wc -c)
echo "gpu-check/: $bytes bytes ($((bytes / 1000000)) MB)"
if [ "$bytes" -gt 60000000 ]; then
    echo "build-gpu-check: gpu-check/ is over 60 MB; a device session carries 64 MiB in all" >&2
    exit 1
fi
