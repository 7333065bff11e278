#!/usr/bin/env bash
# qsweep vs SimPy and Ciw, measured side by side on the same two points:
#   mmc: M/M/51 at rho 0.98 (exp service mean 1, lambda 49.98), FCFS central queue
#   mg1: M/G/1 at rho 0.9, lognormal service (mean 1, scv 4), lambda 0.9
# Writes results.csv and RESULTS.md here and prints the table. See docs/speed.md.
#
# Knobs (environment), with their defaults:
#   PEER_CUSTOMERS=200000  PEER_WARMUP=20000   per Python run (one long run)
#   QSWEEP_CUSTOMERS=100000  QSWEEP_WARMUP=10000     per qsweep replication
#   QSWEEP_REPS_MMC=1024  QSWEEP_REPS_MG1=2048       qsweep CPU runs (>= 2 s each here)
#   QSWEEP_GPU_REPS       default 128 on a software adapter (llvmpipe), 16384 on a real GPU
#   SEED=1                PYTHON=python3 (to make the venv)
#   SKIP_PYTHON=1         reuse the Python rows of the previous run (out/python.jsonl)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
cd "$HERE"

PEER_CUSTOMERS="${PEER_CUSTOMERS:-200000}"
PEER_WARMUP="${PEER_WARMUP:-20000}"
QSWEEP_REPS_MMC="${QSWEEP_REPS_MMC:-1024}"
QSWEEP_REPS_MG1="${QSWEEP_REPS_MG1:-2048}"
QSWEEP_CUSTOMERS="${QSWEEP_CUSTOMERS:-100000}"
QSWEEP_WARMUP="${QSWEEP_WARMUP:-10000}"
SEED="${SEED:-1}"
PYTHON="${PYTHON:-python3}"

OUT="$HERE/out"
mkdir -p "$OUT"
log() { printf '[peers] %s\n' "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# --- 1. Python peers in a venv (.venv, gitignored) ---------------------------
if [[ ! -x .venv/bin/python ]]; then
    log "creating .venv with $($PYTHON --version 2>&1)"
    "$PYTHON" -m venv .venv
fi
log "pip install -r requirements.txt (pinned simpy, ciw)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
PY="$HERE/.venv/bin/python"

# --- 2. qsweep (release: what `cargo run --release` gives users) ------------
log "cargo build --release"
BUILD_NOTE=""
if ! (cd "$REPO" && cargo build --release --quiet); then
    [[ -x "$REPO/target/release/qsweep" ]] || { log "cargo build failed and there is no qsweep binary"; exit 1; }
    BUILD_NOTE="cargo build failed; measured the existing target/release/qsweep, which may be stale"
    log "WARNING: $BUILD_NOTE"
fi
# Run a frozen copy: target/release/qsweep may be rebuilt by someone else mid-run.
cp "$REPO/target/release/qsweep" "$OUT/qsweep"
QSWEEP="$OUT/qsweep"

# --- 3. Machine --------------------------------------------------------------
{
    echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "nproc:   $(nproc)"
    echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at start)"
    echo "python:  $("$PY" --version 2>&1); $("$PY" -m pip freeze --disable-pip-version-check | tr '\n' ' ')"
    echo "binary:  target/release/qsweep built $(date -u -r "$REPO/target/release/qsweep" '+%Y-%m-%d %H:%M:%S UTC'), release profile"
    echo "qsweep:  $("$QSWEEP" --version) ($(cd "$REPO" && git rev-parse --short HEAD)$(cd "$REPO" && git diff --quiet HEAD -- src shaders || echo ', with uncommitted changes'))"
    echo "qsweep adapters:"
    "$QSWEEP" adapters 2>&1 | sed 's/^/  /' || true
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" >&2

ROWS="$OUT/rows.jsonl"
NOTES="$OUT/notes.txt"
: > "$ROWS"
: > "$NOTES"
[[ -z "$BUILD_NOTE" ]] || echo "$BUILD_NOTE" >> "$NOTES"

# --- 4. SimPy and Ciw: one long run each, single-threaded --------------------
if [[ "${SKIP_PYTHON:-0}" == 1 && -s "$OUT/python.jsonl" ]]; then
    log "SKIP_PYTHON=1: reusing $OUT/python.jsonl"
else
    : > "$OUT/python.jsonl"
    for point in mmc mg1; do
        for tool in simpy ciw; do
            log "$tool $point: $PEER_CUSTOMERS customers (warm-up $PEER_WARMUP), seed $SEED"
            t0=$(now)
            line=$("$PY" "${tool}_peer.py" --point "$point" --customers "$PEER_CUSTOMERS" \
                   --warmup "$PEER_WARMUP" --seed "$SEED")
            t1=$(now)
            # Add the whole-process time (interpreter start and imports included).
            "$PY" -c 'import json,sys; r=json.loads(sys.argv[1]); r["process_seconds"]=float(sys.argv[2]); print(json.dumps(r))' \
                "$line" "$(elapsed "$t0" "$t1")" >> "$OUT/python.jsonl"
        done
    done
fi
cat "$OUT/python.jsonl" >> "$ROWS"

# --- 5. qsweep: CPU on 1 thread, CPU on all cores, GPU if an adapter exists ---
point_args() {
    case "$1" in
        mmc) echo "--routing central --servers 51 --rho 0.98 --service exp(mean=1)" ;;
        mg1) echo "--routing central --servers 1 --rho 0.9 --service lognormal(scv=4,mean=1)" ;;
    esac
}
run_qsweep() {  # point label reps extra-args...
    local point=$1 label=$2 reps=$3; shift 3
    local csv="$OUT/qsweep-$point-${label//[^a-z0-9]/_}.csv"
    log "qsweep $point [$label]: $reps reps x ($QSWEEP_WARMUP + $QSWEEP_CUSTOMERS) customers"
    local t0 t1
    t0=$(now)
    # shellcheck disable=SC2046  # point_args is meant to split into words
    "$QSWEEP" run $(point_args "$point") --reps "$reps" --customers "$QSWEEP_CUSTOMERS" \
        --warmup "$QSWEEP_WARMUP" --seed "$SEED" -o "$csv" --force --quiet "$@" > "$OUT/qsweep-last.log" 2>&1 \
        || { cat "$OUT/qsweep-last.log" >&2
             { echo "qsweep $point [$label] failed:"; grep -v '^ *$' "$OUT/qsweep-last.log" | sed 's/^/    /'; } >> "$NOTES"
             return 1; }
    t1=$(now)
    "$PY" report.py qsweep-row "$csv" "$label" "$(elapsed "$t0" "$t1")" >> "$ROWS"
}

GPU_LINE=$("$QSWEEP" adapters 2>/dev/null | sed -n 2p || true)
if [[ -n "$GPU_LINE" ]]; then
    if grep -qw Cpu <<< "$GPU_LINE"; then GPU_KIND=software; DEF_GPU_REPS=128; else GPU_KIND=hardware; DEF_GPU_REPS=16384; fi
    QSWEEP_GPU_REPS="${QSWEEP_GPU_REPS:-$DEF_GPU_REPS}"
else
    log "no GPU adapter: skipping --backend gpu"
fi

for point in mmc mg1; do
    if [[ $point == mmc ]]; then reps=$QSWEEP_REPS_MMC; else reps=$QSWEEP_REPS_MG1; fi
    run_qsweep "$point" "cpu, 1 thread" "$reps" --backend cpu -j 1
    run_qsweep "$point" "cpu, $(nproc) threads" "$reps" --backend cpu -j 0
    if [[ -n "$GPU_LINE" ]]; then
        # A GPU failure is reported in the table's notes; the run goes on.
        run_qsweep "$point" "gpu ($GPU_KIND)" "$QSWEEP_GPU_REPS" --backend gpu || true
    fi
done

# --- 6. Table ------------------------------------------------------------------
"$PY" report.py table "$ROWS" "$HERE/results.csv" "$HERE/RESULTS.md" "$OUT/machine.txt" "$NOTES"
log "wrote $HERE/results.csv and $HERE/RESULTS.md"
