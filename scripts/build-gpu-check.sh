#!/usr/bin/env bash
# Builds what scripts/gpu-check.sh runs on a machine with a real GPU, which
# cannot reach package registries: a stripped release `qsweep` and the
# stripped GPU-vs-CPU test binary, in gpu-check/bin/ (ignored by git; well
# under the 64 MiB a device session may carry). Run it here, then carry
# gpu-check/ and run `scripts/gpu-check.sh` there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=gpu-check/bin
rm -rf "$bin"
mkdir -p "$bin"
cargo build --release --bin qsweep
# The test binary's path carries a hash: ask cargo for it.
test_bin=$(cargo test --release --test gpu_matches_cpu --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*gpu_matches_cpu[^"]*\)".*/\1/p' | tail -n 1)
[ -n "$test_bin" ] || { echo "build-gpu-check: no gpu_matches_cpu test binary" >&2; exit 1; }
cp target/release/qsweep "$bin/qsweep"
cp "$test_bin" "$bin/gpu_matches_cpu"
strip "$bin/qsweep" "$bin/gpu_matches_cpu"
git rev-parse HEAD > "$bin/REVISION" 2>/dev/null || true
du -sh "$bin"
