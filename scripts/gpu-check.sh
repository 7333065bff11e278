#!/usr/bin/env bash
# The hardware check of the GPU engine (issue 14), from prebuilt stripped
# binaries (scripts/build-gpu-check.sh), in a few minutes, everything under
# $OUT:
#   adapters.txt, nvidia-smi.txt   what the machine and wgpu see;
#   gpu_matches_cpu.txt            the GPU-vs-CPU agreement tests, with
#                                  QSWEEP_REQUIRE_GPU=1 (they cannot skip);
#   seed-{gpu,gpu2,gpu-in-turn,cpu}.csv
#                                  the default study on the GPU twice, once
#                                  more with one-server segments in turn
#                                  (QSWEEP_SEGMENT_LAYOUT), and on the CPU,
#                                  with their .meta.json;
#   compare.txt                    GPU vs CPU means within their CIs, and
#                                  the GPU runs identical apart from the
#                                  timing columns;
#   bench.csv, bench.txt           `qsweep bench` on every backend;
#   summary.txt                    one line per step, PASS or FAIL.
# Exit status: the number of failed steps. Usage:
#   OUT=/some/dir scripts/gpu-check.sh [BIN_DIR]   (default gpu-check/bin)
# QSWEEP_CHECK_SMALL=1 shrinks the study (a smoke test on lavapipe).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=${1:-gpu-check/bin}
out=${OUT:-gpu-check-out}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
failed=0
step() { # step NAME COMMAND...: run, log PASS/FAIL with seconds
    local name=$1
    shift
    local t0=$SECONDS
    if "$@"; then
        echo "PASS $name ($((SECONDS - t0)) s)" | tee -a "$summary"
    else
        echo "FAIL $name ($((SECONDS - t0)) s)" | tee -a "$summary"
        failed=$((failed + 1))
    fi
}
qsweep="$bin/qsweep"
small=()
if [ "${QSWEEP_CHECK_SMALL:-0}" = 1 ]; then
    small=(--reps 64 --customers 20000 --warmup 5000)
fi

date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
cat "$bin/REVISION" > "$out/revision.txt" 2>/dev/null || true
(nvidia-smi || true) > "$out/nvidia-smi.txt" 2>&1
step adapters sh -c "'$qsweep' adapters > '$out/adapters.txt' 2>&1"
step gpu_matches_cpu sh -c "QSWEEP_REQUIRE_GPU=1 '$bin/gpu_matches_cpu' --test-threads 1 > '$out/gpu_matches_cpu.txt' 2>&1"
run_study() { # run_study NAME BACKEND [QSWEEP_SEGMENT_LAYOUT]
    QSWEEP_SEGMENT_LAYOUT=${3:-} timeout 240 "$qsweep" run --quiet --force --backend "$2" "${small[@]}" -o "$out/$1.csv" \
        > "$out/$1.stdout" 2> "$out/$1.stderr"
}
step seed-gpu run_study seed-gpu gpu
step seed-gpu-again run_study seed-gpu2 gpu
# One-server segments in turn, one invocation per replication (on hardware
# the default runs them side by side): the same numbers, another time.
step seed-gpu-in-turn run_study seed-gpu-in-turn gpu in-turn
step seed-cpu run_study seed-cpu cpu

# The CSV with commas inside quoted fields (the backend's name, laws)
# turned into semicolons, so awk can split on commas.
plain() {
    awk '{ out = ""; q = 0
           for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
               if (c == "\"") q = !q; else if (c == "," && q) c = ";"; out = out c }
           print out }' "$1"
}
# Column values of a CSV by name: column FILE NAME
column() {
    plain "$1" | awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
        { print $c }'
}
compare_means() { # every point: |gpu - cpu| <= sqrt(hw_gpu^2 + hw_cpu^2) (95% CIs)
    paste -d' ' <(column "$out/seed-gpu.csv" mean_wait) <(column "$out/seed-gpu.csv" mean_wait_ci95) \
        <(column "$out/seed-cpu.csv" mean_wait) <(column "$out/seed-cpu.csv" mean_wait_ci95) |
        awk '{ d = $1 - $3; if (d < 0) d = -d; hw = sqrt($2 * $2 + $4 * $4);
               ok = (d <= hw || d == 0); bad += !ok;
               printf "point %d gpu %s ± %s cpu %s ± %s %s\n", NR - 1, $1, $2, $3, $4, ok ? "ok" : "OUTSIDE" }
             END { printf "%d of %d points outside the combined CI\n", bad, NR; exit bad > NR / 20 }' \
        > "$out/compare.txt"
}
without_timing() { # the CSV without backend, seconds, customers_per_s
    plain "$1" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i == "backend" || $i == "seconds" || $i == "customers_per_s") }
        { line = ""; for (i = 1; i <= NF; i++) if (!drop[i]) line = line $i ","; print line }'
}
identical_gpu_runs() {
    diff <(without_timing "$out/seed-gpu.csv") <(without_timing "$out/seed-gpu2.csv") >> "$out/compare.txt"
}
identical_layouts() {
    diff <(without_timing "$out/seed-gpu.csv") <(without_timing "$out/seed-gpu-in-turn.csv") >> "$out/compare.txt"
}
step means-agree compare_means
step gpu-runs-identical identical_gpu_runs
step segment-layouts-identical identical_layouts
step bench sh -c "timeout 240 '$qsweep' bench --seconds 1 -o '$out/bench.csv' --force > '$out/bench.txt' 2>&1"
echo "$failed failed" | tee -a "$summary"
exit "$failed"
