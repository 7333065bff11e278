#!/usr/bin/env bash
# The hardware check of the GPU engine (issues 14 and 21), from the binaries
# scripts/build-gpu-check.sh puts in gpu-check/ (nothing is built or
# downloaded here), in under 480 s: every step runs under `timeout` with its
# own budget (the table is printed first and must add up to at most 480 s;
# 600 s in the reduced mode).
# Everything goes under $OUT:
#   machine.txt          the machine: kernel, glibc, Vulkan loader and ICDs,
#                        nvidia-smi, vulkaninfo, WGPU_* / VK_* variables;
#   STEP.txt             each step's output (STEP.csv and .meta.json for runs);
#   compare-*.txt        the comparisons, point by point;
#   summary.txt          one PASS/FAIL line per step with its seconds, then
#                        "N failed".
# Exit status: the number of failed steps (0: passed).
#
# It cannot pass on a software adapter: the smoke run must have run on an
# adapter whose type is not Cpu (lavapipe, llvmpipe, SwiftShader), or the
# check FAILs there and stops. The GPU tests run with QSWEEP_REQUIRE_GPU=1
# and must each run as many tests as they list (none may skip).
# If the image has no Vulkan loader it uses gpu-check/lib/libvulkan.so.1;
# if it has NVIDIA's Vulkan driver library but no ICD file naming it, it
# writes one under $OUT. A glibc older than the binaries need is one FAIL.
#
# Usage: OUT=/some/dir scripts/gpu-check.sh [BIN_DIR]   (default gpu-check/bin;
# the Vulkan loader is looked for in BIN_DIR/../lib)
# QSWEEP_CHECK_SMALL=1: the reduced mode (CI on lavapipe): small sizes, and a
# software adapter allowed.
# shellcheck disable=SC2317 # the steps' functions run through `timeout bash -c`
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

built=${1:-gpu-check/bin}
if [ ! -e "$built/qsweep.gz" ] && [ ! -x "$built/qsweep" ]; then
    echo "gpu-check: no $built/qsweep.gz (run scripts/build-gpu-check.sh first)" >&2
    exit 1
fi
built=$(cd "$built" && pwd)
lib=$(cd "$built/.." && pwd)/lib
# The binaries, unpacked outside $OUT (which a device session sends back).
bin=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX") || exit 1
trap 'rm -rf "$bin"' EXIT
for f in qsweep it; do
    if [ -e "$built/$f.gz" ]; then
        gzip -dc "$built/$f.gz" > "$bin/$f" || { echo "gpu-check: cannot unpack $built/$f.gz" >&2; exit 1; }
    elif [ -e "$built/$f" ]; then
        cp "$built/$f" "$bin/$f"
    else
        continue # its step fails
    fi
    chmod +x "$bin/$f"
done
cp "$built/BUILD-INFO" "$bin/" 2> /dev/null
out=${OUT:-gpu-check-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A previous check's results must not stand in for a step that wrote none:
# $OUT is new, empty or a previous check's, and is emptied.
if [ -n "$(ls -A "$out")" ] && [ ! -e "$out/.gpu-check" ]; then
    echo "gpu-check: OUT=$out holds files not written by gpu-check; give a new directory" >&2
    exit 1
fi
rm -rf "${out:?}"/* "$out/.gpu-check"
touch "$out/.gpu-check"
small=0
[ "${QSWEEP_CHECK_SMALL:-0}" = 1 ] && small=1
summary=$out/summary.txt
: > "$summary"
mkdir -p "$out/notes" "$out/passed"
export bin lib out small
export QSWEEP_REQUIRE_GPU=1
# Settings that would make the check run something else than a user's run.
unset_vars=""
for v in QSWEEP_SEGMENT_LAYOUT QSWEEP_GPU_LIMITS; do
    [ -n "${!v+x}" ] && unset_vars="$unset_vars $v=${!v}" && unset "$v"
done
export unset_vars

# ---- The budget: seconds per step, in the order they run. ----
# Cheap and telling first: what the machine is, whether the binaries load,
# which adapter a run gets, then the tests, then the studies. Two columns:
# full size (a hardware GPU; 16 cores) and reduced (QSWEEP_CHECK_SMALL=1,
# CI's lavapipe on 2 cores, where the test binaries, the same in both
# modes, take most of the time, 2-3 times longer on a busy machine); the
# full column adds up to at most 480 s, the reduced one to at most 600 s.
# (Reduced, the other layout is side by side on lavapipe, whose central
# queues of 75 to 4000 servers then run a workgroup per replication: 64
# lanes on one core drawing the same stream, 4-6x the default's time, 29-46
# s on one 2-core host, 68-75 s on a slower one.)
steps=(
    # step:full:reduced
    machine:20:10 glibc:5:5 adapters:10:10 smoke:25:20 hardware-adapter:10:5
    gpu_matches_cpu:90:60 dispatch-tests:50:60 theory-tests:50:60
    seed-gpu:30:30 seed-cpu:25:10 means-agree:5:5
    seed-gpu-again:25:30 gpu-runs-identical:5:5
    seed-gpu-layout:25:180 segment-layouts-identical:5:5
    dispatch-gpu:25:35 dispatch-cpu:20:10 dispatch-agree:5:5
    auto:25:10 bench:20:25
)
# A device call runs at most 600 s; CI's reduced run is allowed 600 s.
cap=480
[ "$small" = 1 ] && cap=600
declare -A budget
total=0
mode=full
[ "$small" = 1 ] && mode=reduced
printf '%5s %8s  %s\n' full reduced "step (budget, s; this run: $mode)"
for s in "${steps[@]}"; do
    IFS=: read -r name full reduced <<< "$s"
    budget[$name]=$full
    [ "$small" = 1 ] && budget[$name]=$reduced
    total=$((total + ${budget[$name]}))
    printf '%5d %8d  %s\n' "$full" "$reduced" "$name"
done
printf '%14d  total of the %s column (at most %d)\n' "$total" "$mode" "$cap"
if [ "$total" -gt "$cap" ]; then
    echo "gpu-check: the budgets add up to $total s, over $cap s" >&2
    exit 1
fi
if [ "$small" = 1 ]; then
    echo "reduced mode (QSWEEP_CHECK_SMALL=1): small sizes, software adapter allowed"
fi

failed=0
stopped=""
step() { # step NAME FUNCTION [ARGS...]: FUNCTION under timeout, PASS/FAIL with seconds
    local name=$1
    shift
    local b=${budget[$name]:-}
    if [ -z "$b" ]; then
        echo "FAIL $name (no budget in the table)" | tee -a "$summary"
        failed=$((failed + 1))
        return
    fi
    if [ -n "$stopped" ]; then
        echo "SKIP $name ($stopped)" | tee -a "$summary"
        return
    fi
    # The whole check stays under the cap even if steps overran.
    local left=$((cap - SECONDS))
    if [ "$left" -lt 1 ]; then
        echo "FAIL $name (no time left of the $cap s)" | tee -a "$summary"
        failed=$((failed + 1))
        return
    fi
    [ "$b" -gt "$left" ] && b=$left
    local t0=$SECONDS rc note=""
    echo "== $name (at most $b s)"
    timeout -k 3 "$b" bash -c '"$@"' "$name" "$@"
    rc=$?
    [ -s "$out/notes/$name" ] && note=": $(head -c 400 "$out/notes/$name" | tr '\n' ' ' | sed 's/ *$//')"
    if [ "$rc" = 0 ]; then
        echo "PASS $name ($((SECONDS - t0)) s)$note" | tee -a "$summary"
        touch "$out/passed/$name"
    else
        case $rc in
        124 | 137) note=" timed out after $b s$note" ;;
        *) note=" exit $rc$note" ;;
        esac
        echo "FAIL $name ($((SECONDS - t0)) s)$note" | tee -a "$summary"
        failed=$((failed + 1))
    fi
}
note() { # note NAME TEXT: the text after a step's summary line
    echo "$2" >> "$out/notes/$1"
}

# ---- The machine. ----
have() { command -v "$1" > /dev/null 2>&1; }
ldcache() {
    if have ldconfig; then ldconfig -p; elif [ -x /sbin/ldconfig ]; then /sbin/ldconfig -p; fi 2> /dev/null
}
libs=$(ldcache)
icd_dirs="/etc/vulkan/icd.d /usr/local/share/vulkan/icd.d /usr/share/vulkan/icd.d"
# The Vulkan loader: the image's own, else the one built beside the binaries.
loader_note="Vulkan loader: the image's"
if ! grep -q 'libvulkan\.so\.1 ' <<< "$libs"; then
    if [ -e "$lib/libvulkan.so.1" ]; then
        export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        loader_note="Vulkan loader: none in the image; using $lib/libvulkan.so.1"
    else
        loader_note="Vulkan loader: none in the image, and no $lib/libvulkan.so.1"
    fi
fi
# NVIDIA's Vulkan driver is libGLX_nvidia.so.0; container images often have
# the library without the ICD file that names it.
icd_note=""
# shellcheck disable=SC2086 # icd_dirs: plain words
icds=$(for d in $icd_dirs; do cat "$d"/*.json; done 2> /dev/null)
if ! grep -qi nvidia <<< "$icds" &&
    [ -z "${VK_ICD_FILENAMES:-}${VK_DRIVER_FILES:-}" ] &&
    grep -q 'libGLX_nvidia\.so\.0 ' <<< "$libs"; then
    mkdir -p "$out/icd.d"
    printf '{ "file_format_version": "1.0.0", "ICD": { "library_path": "libGLX_nvidia.so.0", "api_version": "1.3.0" } }\n' \
        > "$out/icd.d/nvidia_icd.json"
    export VK_ICD_FILENAMES=$out/icd.d/nvidia_icd.json VK_DRIVER_FILES=$out/icd.d/nvidia_icd.json
    icd_note="NVIDIA ICD: libGLX_nvidia.so.0 present without an ICD file; wrote $VK_ICD_FILENAMES"
fi
export loader_note icd_note icd_dirs

machine() {
    exec > "$out/machine.txt" 2>&1
    echo "== date"; date -u +%Y-%m-%dT%H:%M:%SZ
    echo "== uname -a"; uname -a
    echo "== os-release"; cat /etc/os-release 2> /dev/null
    echo "== cores, memory"; nproc; free -g 2> /dev/null | head -n 2
    echo "== glibc"; getconf GNU_LIBC_VERSION 2> /dev/null; ldd --version 2>&1 | head -n 1
    echo "== built as"; cat "$bin/BUILD-INFO" 2> /dev/null
    echo "== $loader_note"
    [ -n "$icd_note" ] && echo "== $icd_note"
    echo "== ldconfig -p | grep -i -E 'vulkan|nvidia|GLX'"; ldcache | grep -i -E 'vulkan|nvidia|GLX'
    echo "== ICD files"
    for d in $icd_dirs "$out/icd.d"; do
        for f in "$d"/*.json; do
            [ -e "$f" ] || continue
            echo "-- $f"; cat "$f"
        done
    done
    echo "== /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version 2> /dev/null
    echo "== nvidia-smi"; if have nvidia-smi; then timeout 10 nvidia-smi; else echo "(no nvidia-smi)"; fi
    echo "== vulkaninfo --summary"
    if have vulkaninfo; then timeout 10 vulkaninfo --summary; else echo "(no vulkaninfo)"; fi
    echo "== environment"; env | grep -E '^(WGPU_|VK_|NVIDIA_|CUDA_VISIBLE|LD_LIBRARY_PATH|QSWEEP_)' | sort
    [ -n "$unset_vars" ] && echo "unset for the check:$unset_vars"
    true
}
export -f machine have ldcache note
# The device's glibc against what the binaries were linked for.
glibc() {
    local have_v need
    have_v=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{ print $2 }')
    [ -n "$have_v" ] || have_v=$(ldd --version 2>&1 | awk 'NR == 1 { print $NF }')
    need=$(sed -n 's/^glibc_required=//p' "$bin/BUILD-INFO" 2> /dev/null)
    if [ -z "$need" ]; then
        note glibc "no glibc_required in $bin/BUILD-INFO (rebuild with scripts/build-gpu-check.sh)"
        return 1
    fi
    if [ "$(printf '%s\n%s\n' "$need" "$have_v" | sort -V | head -n 1)" != "$need" ]; then
        note glibc "glibc $have_v here, the binaries need $need (built on $(sed -n 's/^glibc_build=//p' "$bin/BUILD-INFO")): build them on an older system"
        return 1
    fi
    note glibc "glibc $have_v, binaries need $need"
}
export -f glibc

step machine machine
echo "  $loader_note${icd_note:+; $icd_note}"
step glibc glibc
# Every binary would fail to load: the rest has nothing to say.
grep -q '^FAIL glibc' "$summary" && stopped="glibc too old"

qsweep=$bin/qsweep
export qsweep

# ---- The adapter: which one a run gets, and whether it is hardware. ----
adapters() {
    "$qsweep" adapters > "$out/adapters.txt" 2>&1 || return 1
    cat "$out/adapters.txt"
    grep -q 'no GPU adapters' "$out/adapters.txt" && { note adapters "no adapters"; return 1; }
    note adapters "$(($(wc -l < "$out/adapters.txt") - 1)) adapter(s)"
}
# run NAME ARGS...: `qsweep run ARGS` into NAME.csv, its stderr in NAME.txt;
# the run's reason line ("qsweep: backend: ...") is the step's note. Fails
# if a row has an error.
run() {
    local name=$1
    shift
    "$qsweep" run --force -o "$out/$name.csv" "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    grep '^qsweep: backend:' "$out/$name.txt" | head -n 1 | sed 's/^qsweep: backend: //' > "$out/notes/$name"
    if [ "$rc" != 0 ]; then
        tail -n 5 "$out/$name.txt"
        return "$rc"
    fi
    local errors
    errors=$(csv_column "$out/$name.csv" error | grep -c .)
    [ "$errors" = 0 ] || { note "$name" "$errors rows with an error"; return 1; }
}
# ran_on NAME BACKEND: every row of NAME.csv ran on BACKEND (the CSV's backend
# column; a GPU run that fell back to the CPU after a device failure says so
# there), with the smoke run's adapter for gpu.
ran_on() {
    local want=$2 got
    [ "$want" = gpu ] && want=$(cat "$out/adapter-label" 2> /dev/null)
    got=$(csv_column "$out/$1.csv" backend | sed 's/^"//; s/"$//; s/;/,/g' | sort -u)
    [ -n "$want" ] && [ "$got" = "$want" ] && return 0
    note "$1" "rows ran on '$got', not '$want'"
    return 1
}
smoke() {
    run smoke --backend gpu --routing random,central,jsq --servers 4,64 --rho 0.8 \
        --reps 16 --customers 4000 --warmup 1000
}
# Why the Vulkan loader found no hardware driver, in its own words.
loader_debug() {
    VK_LOADER_DEBUG=error,warn,driver timeout 4 "$qsweep" adapters > "$out/loader-debug.txt" 2>&1
}
# The adapter the smoke run's rows name (backend column: BACKEND:NAME) and
# its type in `qsweep adapters`; anything it cannot tell is a FAIL.
hardware_adapter() {
    local label name row type
    label=$(csv_column "$out/smoke.csv" backend | sed 's/^"//; s/"$//; s/;/,/g' | sort -u)
    if [ -z "$label" ] || [ "$(wc -l <<< "$label")" != 1 ]; then
        note hardware-adapter "cannot tell the adapter from smoke.csv's backend column: '$label' (loader-debug.txt)"
        loader_debug
        return 1
    fi
    name=${label#*:}
    row=$(grep -F -- "$name" "$out/adapters.txt" | head -n 1)
    type=$(grep -o -E '  [a-z0-9]+  +(Cpu|DiscreteGpu|IntegratedGpu|VirtualGpu|Other)  ' <<< "$row" | awk '{ print $2 }')
    if [ -z "$type" ]; then
        note hardware-adapter "$label: no type for it in adapters.txt"
        return 1
    fi
    echo "$type" > "$out/adapter-type"
    echo "$label" > "$out/adapter-label"
    # How the engine planned for it, where the .meta.json says.
    local planned
    planned=$(grep -o '"planned_as": *"[a-z]*"' "$out/smoke.meta.json" 2> /dev/null | sed 's/.*: *"//; s/"//')
    if [ "$type" = Cpu ] || [ "$planned" = software ] ||
        grep -q -i -E 'llvmpipe|lavapipe|softpipe|swiftshader|basic render' <<< "$name"; then
        if [ "$small" = 1 ]; then
            note hardware-adapter "$label is software ($type): software adapter allowed (reduced mode)"
            return 0
        fi
        note hardware-adapter "$label is a software adapter ($type): this checks nothing of a GPU (loader-debug.txt)"
        loader_debug
        return 1
    fi
    note hardware-adapter "$label ($type)"
}

# ---- The GPU tests: each binary must run every test its filter lists. ----
# tests NAME BINARY [FILTER...]
tests() {
    local name=$1 exe=$bin/$2
    shift 2
    local listed
    listed=$("$exe" --list "$@" 2> /dev/null | grep -c ': test$')
    if [ "$listed" = 0 ]; then
        note "$name" "no test matches '$*' in $exe"
        return 1
    fi
    "$exe" --test-threads 1 "$@" > "$out/$name.txt" 2>&1
    local rc=$?
    grep -q '^SKIPPED' "$out/$name.txt" && { note "$name" "a test skipped"; return 1; }
    local result
    result=$(grep '^test result:' "$out/$name.txt" | tail -n 1)
    result=${result#test result: }
    note "$name" "${result:-no test result line}"
    local failures
    failures=$(sed -n 's/^test \(.*\) \.\.\. FAILED$/failed: \1/p' "$out/$name.txt")
    [ -z "$failures" ] || note "$name" "$failures"
    [ "$rc" = 0 ] && grep -q "^test result: ok\. $listed passed" "$out/$name.txt"
}

# ---- Studies and their comparisons. ----
# The CSV with commas inside quoted fields turned into semicolons, so awk
# can split on commas.
plain() {
    awk '{ out = ""; q = 0
           for (i = 1; i <= length($0); i++) { c = substr($0, i, 1)
               if (c == "\"") q = !q; else if (c == "," && q) c = ";"; out = out c }
           print out }' "$1"
}
# csv_column FILE NAME: the named column's values (fails if there is none)
csv_column() {
    plain "$1" | awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i
                                                 if (!c) exit 1; next }
                                       { print $c }'
}
# The CSV without the columns that may differ between identical runs.
without_timing() {
    plain "$1" | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i == "backend" || $i == "seconds" || $i == "customers_per_s") }
        { line = ""; for (i = 1; i <= NF; i++) if (!drop[i]) line = line $i ","; print line }'
}
# identical NAME A B: the two CSVs equal apart from the timing columns
# passed STEP...: the steps whose CSVs a comparison reads passed
passed() {
    local s
    for s in "$@"; do
        [ -e "$out/passed/$s" ] || { note "$name" "$s did not pass"; return 1; }
    done
}
identical() {
    local name=$1 a=$out/$2.csv b=$out/$3.csv
    passed "$2" "$3" || return 1
    if diff <(without_timing "$a" | LC_ALL=C sort) <(without_timing "$b" | LC_ALL=C sort) > "$out/compare-$name.txt"; then
        note "$name" "$(($(wc -l < "$a") - 1)) rows identical"
    else
        note "$name" "$(grep -c '^<' "$out/compare-$name.txt") rows differ (compare-$name.txt)"
        return 1
    fi
}
# agree NAME GPU CPU ALLOWED: every point's mean wait within the combined 95%
# CI, |gpu - cpu| <= sqrt(hw_gpu^2 + hw_cpu^2), but for at most ALLOWED
# points; also says how many rows are identical apart from the timing
# columns and the largest relative difference. The engines draw the same
# random numbers (docs/reproducibility.md), so their means differ by far
# less than a CI where they take the same branches; a dispatch decision
# between nearly simultaneous events may go the other way on a GPU (its
# fused multiply-adds), sending a replication down another valid path.
agree() {
    local name=$1 g=$out/$2.csv c=$out/$3.csv f=$out/compare-$1.txt allowed=$4
    passed "$2" "$3" || return 1
    local same rows
    rows=$(($(wc -l < "$g") - 1))
    same=$(LC_ALL=C comm -12 <(without_timing "$g" | LC_ALL=C sort) <(without_timing "$c" | LC_ALL=C sort) |
        grep -c -v '^point,')
    # point mean ci, by point
    means() {
        paste -d' ' <(csv_column "$1" point) <(csv_column "$1" mean_wait) <(csv_column "$1" mean_wait_ci95) |
            LC_ALL=C sort -k1,1
    }
    LC_ALL=C join -a 1 -a 2 <(means "$g") <(means "$c") | awk -v rows="$rows" -v same="$same" -v allowed="$allowed" '
        NF != 5 { bad_rows = 1; next }
        { d = $2 - $4; if (d < 0) d = -d; hw = sqrt($3 * $3 + $5 * $5)
          ok = (d <= hw || d == 0); outside += !ok; n++
          rel = ($4 != 0) ? d / ($4 < 0 ? -$4 : $4) : d; if (rel > max) max = rel
          printf "point %s gpu %s ± %s cpu %s ± %s %s\n", $1, $2, $3, $4, $5, ok ? "ok" : "OUTSIDE" }
        END { note = sprintf("%d of %d points outside the combined CI, %d of %d rows identical, largest relative difference %.2g",
                             outside, n, same, rows, max)
              print note
              if (bad_rows || n == 0 || n != rows) { print "points do not pair up"; exit 1 }
              exit (outside > allowed) }' > "$f"
    local rc=$?
    note "$name" "$(tail -n 1 "$f")"
    return "$rc"
}
export -f adapters run ran_on smoke loader_debug hardware_adapter tests plain csv_column without_timing passed identical agree

step adapters adapters
step smoke smoke
step hardware-adapter hardware_adapter
grep -q '^FAIL hardware-adapter' "$summary" && stopped="not a hardware adapter"

# The GPU tests: all of gpu_matches_cpu; the dispatch kernel's GPU-vs-CPU
# tests of tests/it/dynamic.rs (jsq, pod, jiq, lwl, central with routers: the
# two named gpu_*, and the run loop growing queues on each engine); the GPU
# theory tests of tests/it/theory.rs (gpu_*, cpu_and_gpu_*).
# In the reduced mode (CI) a few of each, which take seconds on lavapipe:
# .ci/run's test step has just run every one of them, from the same source,
# so here they only show that the bundle's test binary runs GPU tests. The
# whole lists took 366 s on a 2-core host without AVX-512 (2026-12-07),
# past their budgets, for nothing CI had not already seen.
if [ "$small" = 1 ]; then
    step gpu_matches_cpu tests gpu_matches_cpu it \
        gpu_matches_cpu::empirical_replications_are_the_cpus_to_the_bit
    step dispatch-tests tests dispatch-tests it dynamic::gpu_matches_cpu_for_every_policy \
        dynamic::the_run_loop_grows_queues_exactly_on_each_engine
    step theory-tests tests theory-tests it theory::gpu_mm1_random_routing_matches_exact_mm1 \
        theory::gpu_mmc_central_51_servers_at_rho_0_9_matches_erlang_c \
        theory::gpu_segments_side_by_side_match_exact_one_server_queues
else
    step gpu_matches_cpu tests gpu_matches_cpu it gpu_matches_cpu::
    step dispatch-tests tests dispatch-tests it dynamic::gpu_ \
        dynamic::the_run_loop_grows_queues_exactly_on_each_engine
    step theory-tests tests theory-tests it theory::gpu_ theory::cpu_and_gpu_
fi

# The default study (data/seed.toml), full size unless reduced.
study=()
[ "$small" = 1 ] && study=(--reps 64 --customers 20000 --warmup 5000)
export study_text="${study[*]}"
seed_run() { # seed_run NAME BACKEND [QSWEEP_SEGMENT_LAYOUT]
    # shellcheck disable=SC2086 # study_text is a list of plain words
    QSWEEP_SEGMENT_LAYOUT=${3:-} run "$1" --backend "$2" $study_text && ran_on "$1" "$2"
}
# Dispatch policies (the dispatch kernel): jsq, pod, jiq, lwl, and routers.
if [ "$small" = 1 ]; then
    dispatch_size="--servers 8,32 --reps 32 --customers 4000 --warmup 1000"
else
    dispatch_size="--servers 16,128 --reps 256 --customers 20000 --warmup 5000"
fi
export dispatch_size
dispatch_run() { # dispatch_run NAME BACKEND
    # shellcheck disable=SC2086
    run "$1" --backend "$2" --routing jsq,pod,jiq,lwl,central --routers 1,4 --rho 0.9 \
        --service 'exp(mean=1)' $dispatch_size && ran_on "$1" "$2"
}
export -f seed_run dispatch_run

step seed-gpu seed_run seed-gpu gpu
step seed-cpu seed_run seed-cpu cpu
step means-agree agree means-agree seed-gpu seed-cpu 0
step seed-gpu-again seed_run seed-gpu-again gpu
step gpu-runs-identical identical gpu-runs-identical seed-gpu seed-gpu-again
# One-server segments and large central queues in the other layout: in
# turn, one invocation per replication, where the default is side by side
# (hardware: segments side by side, a workgroup per central replication of
# R >= 65), and side by side on a software adapter (whose default is in
# turn): the same numbers.
other_layout=in-turn
[ "$(cat "$out/adapter-type" 2> /dev/null)" = Cpu ] && other_layout=side-by-side
step seed-gpu-layout seed_run seed-gpu-layout gpu "$other_layout"
echo "QSWEEP_SEGMENT_LAYOUT=$other_layout vs the default:" >> "$out/notes/segment-layouts-identical"
step segment-layouts-identical identical segment-layouts-identical seed-gpu seed-gpu-layout
step dispatch-gpu dispatch_run dispatch-gpu gpu
step dispatch-cpu dispatch_run dispatch-cpu cpu
step dispatch-agree agree dispatch-agree dispatch-gpu dispatch-cpu 1

# What a user gets by default: --backend auto, its reason line.
auto_run() {
    # shellcheck disable=SC2086
    run auto --backend auto $study_text || return 1
    [ -s "$out/notes/auto" ] || { note auto "no 'qsweep: backend:' line in auto.txt"; return 1; }
}
bench() {
    local args=(--seconds 0.1)
    [ "$small" = 1 ] && args=(--seconds 0.05 --only 'M/M/1')
    local label
    label=$(csv_column "$out/smoke.csv" backend 2> /dev/null | sed 's/^"//; s/"$//; s/;/,/g' | sort -u | head -n 1)
    [ -n "$label" ] && args+=(--adapter "${label#*:}")
    "$qsweep" bench "${args[@]}" -o "$out/bench.csv" --force > "$out/bench.txt" 2>&1 || return 1
    note bench "$(($(wc -l < "$out/bench.csv") - 1)) measurements (bench.txt)"
}
export -f auto_run bench
step auto auto_run
step bench bench

echo "total $SECONDS s" >> "$summary"
echo "$failed failed" | tee -a "$summary"
exit "$failed"
