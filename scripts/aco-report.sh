#!/usr/bin/env bash
# aco-report.sh - AMD (Mesa RADV/ACO) register / LDS / occupancy report for
# qsweep's WGSL compute kernels, without an AMD GPU (RADV "null" device).
#
# Usage:
#   aco-report.sh [-f FAMILY] [-s REGEX] [-o OUT.tsv] [-k] [-w32] WGSL_DIR
#     -f FAMILY  RADV_FORCE_FAMILY value (default navi21). Mesa 22.3 names:
#                navi10, navi14, navi21..navi24, vangogh, gfx1100 (RDNA3/Navi31),
#                gfx1101, gfx1102, vega10, ... (upper or lower case). "navi31" is
#                NOT known to Mesa 22.3 ("radv: Unknown family"); use gfx1100.
#     -s REGEX   only kernels whose file name matches this extended regex
#     -o FILE    write the TSV there (default: stdout)
#     -k         keep the SPIR-V (prints the temp dir)
#     -w32       compile compute shaders as wave32 (RADV_PERFTEST=cswave32);
#                RADV's default for compute in Mesa 22.3 is wave64.
#   WGSL_DIR is a folder written by `qsweep kernels --out DIR` (entry point `main`).
#
# Output: one TSV line per kernel with RADV's VK_KHR_pipeline_executable_properties
# statistics (SGPRs, VGPRs, spills, code size, LDS size, scratch size,
# "Subgroups per SIMD", instruction counts, ...) plus derived occupancy columns:
#   waves64_per_simd   RADV's "Subgroups per SIMD" converted to wave64 waves
#                      (RADV reports GFX10+ occupancy in wave32 units)
#   vgpr_waves64       wave64 waves/SIMD allowed by VGPRs alone
#   lds_wg_per_wgp     workgroups per WGP allowed by LDS alone (128 KiB/WGP)
#   lds_waves64        wave64 waves/SIMD allowed by LDS alone (RADV rounds up)
#   limiter            which of vgpr / lds / hw-max gives the minimum
#
# Needs: gcc, Vulkan headers+loader (libvulkan-dev), Mesa RADV
# (mesa-vulkan-drivers), naga (naga-cli, from crates.io: cargo install naga-cli).
# Compiling costs ~5-20 s CPU per kernel here (single-threaded; all 1615 kernels ~ 5+ h).
set -euo pipefail

family=navi21
select=''
out=''
keep=0
wave32=0
rederive=''   # -R REPORT.tsv: recompute the derived columns of an existing report
while [ $# -gt 0 ]; do
  case "$1" in
    -f) family="$2"; shift 2 ;;
    -s) select="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    -k) keep=1; shift ;;
    -w32) wave32=1; shift ;;
    -R) rederive="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0"; exit 0 ;;
    -*) echo "unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
# ---- derived occupancy columns (Mesa 22.3 radv_get_max_waves constants) -----
# emit: stdin = TSV from aco_report (with header); stdout = same + derived columns.
# Already-derived columns (from waves64_equiv_per_simd on) are dropped first.
emit() {
  awk -F'\t' -v OFS='\t' -v fam="${1:-}" '
  function ceil(x) { return (x == int(x)) ? x : int(x) + 1 }
  function alignup(x, a) { return ceil(x / a) * a }
  NR == 1 { keep = NF; for (i = 1; i <= NF; i++) if ($i == "waves64_equiv_per_simd") { keep = i - 1; break } }
  { NF = keep }
  NR == 1 {
    for (i = 1; i <= NF; i++) col[$i] = i
    sub(/\.spv$/, "", $1)
    print $0, "waves64_equiv_per_simd", "vgpr_waves64", "lds_wg_per_wgp", "lds_waves64", "limiter"; next
  }
  {
    sub(/\.spv$/, ".wgsl", $1)
    if ($col["status"] != "ok") { print $0, "", "", "", "", ""; next }
    f = tolower(fam == "" ? $col["family"] : fam)
    gfx = 9
    if (f ~ /^navi1|^gfx101/) gfx = 10
    if (f ~ /^navi2|^vangogh|^rembrandt|^gfx103|^raphael|^mendocino|^beige|^yellow/) gfx = 10.3
    if (f ~ /^gfx11|^navi3/) gfx = 11
    W = $col["subgroup_size"]; split($col["workgroup_size"], ws, ",")
    threads = ws[1] * ws[2] * ws[3]; wpg = ceil(threads / W)
    v = $col["VGPRs"]; lds = $col["LDS size"]; sub_simd = $col["Subgroups per SIMD"]
    if (gfx >= 10) {
      phys64 = (f ~ /^gfx1100|^gfx1101|^navi31|^navi32/) ? 768 : 512
      hwmax64 = (gfx == 10) ? 20 : 16
      vg = (gfx >= 10.3) ? ((W == 32) ? 16 : 8) : ((W == 32) ? 8 : 4)
      physW = phys64 * 64 / W
      vgw = int(physW / alignup(v, vg))            # waves of size W per SIMD
      vgpr64 = vgw * W / 64
      gran = (gfx >= 10.3) ? 1024 : 512
      simds = 4; ldsmax = 131072
      waves64 = sub_simd / 2                      # RADV: returns waves*(W/32)... in W=32 units
      if (W == 32) waves64 = sub_simd / 2
    } else {
      phys64 = 256; hwmax64 = 10; vg = 4; vgw = int(phys64 / alignup(v, vg)); vgpr64 = vgw
      gran = 512; simds = 4; ldsmax = 65536; waves64 = sub_simd
    }
    if (lds > 0) {
      wgp = int(ldsmax / alignup(lds, gran))
      ldsw64 = wgp * wpg * (W / 64) / simds
    } else { wgp = "inf"; ldsw64 = "inf" }
    m = hwmax64
    if (vgpr64 < m) m = vgpr64
    if (ldsw64 != "inf" && ldsw64 < m) m = ldsw64
    lim = ""
    if (vgpr64 == m) lim = "vgpr"
    if (ldsw64 != "inf" && ldsw64 == m) lim = lim (lim == "" ? "" : "+") "lds"
    if (hwmax64 == m) lim = lim (lim == "" ? "" : "+") "hw-max"
    if ($col["Scratch size"] > 0) lim = lim "+scratch"
    print $0, waves64, vgpr64, wgp, (ldsw64 == "inf" ? "inf" : sprintf("%.2f", ldsw64)), lim
  }'
}
if [ -n "$rederive" ]; then emit < "$rederive"; exit 0; fi
[ -n "$rederive" ] || [ $# -eq 1 ] || { echo "usage: $0 [-f FAMILY] [-s REGEX] [-o OUT] [-k] [-w32] WGSL_DIR" >&2; exit 2; }
wgsl_dir="$1"
here="$(cd "$(dirname "$0")" && pwd)"

# ---- dependencies ----------------------------------------------------------
need_apt=()
command -v gcc >/dev/null || need_apt+=(gcc libc6-dev)
[ -f /usr/include/vulkan/vulkan.h ] || need_apt+=(libvulkan-dev)
icd=''
for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d; do
  [ -f "$d/radeon_icd.x86_64.json" ] && icd="$d/radeon_icd.x86_64.json" && break
done
[ -n "$icd" ] || need_apt+=(mesa-vulkan-drivers)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing: ${need_apt[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need_apt[@]}" >&2
  else
    echo "missing packages (run as root: apt-get install -y ${need_apt[*]})" >&2; exit 1
  fi
  for d in /usr/share/vulkan/icd.d /etc/vulkan/icd.d; do
    [ -f "$d/radeon_icd.x86_64.json" ] && icd="$d/radeon_icd.x86_64.json" && break
  done
fi
if ! command -v naga >/dev/null; then
  if command -v cargo >/dev/null; then
    echo "installing naga-cli with cargo" >&2; cargo install naga-cli >&2
  else
    echo "missing: naga (WGSL->SPIR-V). Install Rust (apt-get install -y cargo, or rustup) then 'cargo install naga-cli'." >&2
    exit 1
  fi
fi

work="$(mktemp -d /tmp/aco-report.XXXXXX)"
[ $keep = 1 ] && echo "SPIR-V kept in $work" >&2 || trap 'rm -rf "$work"' EXIT

src="$here/aco_report.c"
[ -f "$src" ] || { echo "aco_report.c not found next to $0" >&2; exit 1; }
gcc -O2 -o "$work/aco_report" "$src" -lvulkan

# ---- WGSL -> SPIR-V --------------------------------------------------------
mkdir -p "$work/spv"
n=0
for f in "$wgsl_dir"/*.wgsl; do
  b="$(basename "$f" .wgsl)"
  if [ -n "$select" ] && ! [[ "$b.wgsl" =~ $select ]]; then continue; fi
  if naga "$f" "$work/spv/$b.spv" >/dev/null 2>"$work/naga.err"; then n=$((n+1));
  else echo "naga failed on $f: $(head -c 300 "$work/naga.err")" >&2; fi
done
[ $n -gt 0 ] || { echo "no kernels selected in $wgsl_dir" >&2; exit 1; }
echo "compiling $n kernels for $family ..." >&2

# ---- compile with RADV null device -------------------------------------------
export VK_ICD_FILENAMES="$icd" VK_DRIVER_FILES="$icd"
export RADV_FORCE_FAMILY="$family"
export MESA_SHADER_CACHE_DISABLE=true      # honest fresh compiles, no ~/.cache writes
export NODEVICE_SELECT=1                   # skip Mesa's device-select layer
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
[ $wave32 = 1 ] && export RADV_PERFTEST="${RADV_PERFTEST:+$RADV_PERFTEST,}cswave32"

raw="$work/raw.tsv"
: > "$raw"
# Compile in batches (one Vulkan device per batch) so a driver crash only loses a batch.
mapfile -t files < <(ls "$work/spv"/*.spv)
batch=50
hdr=''
for ((i = 0; i < ${#files[@]}; i += batch)); do
  chunk=("${files[@]:i:batch}")
  if "$work/aco_report" --header --family "$family" "${chunk[@]}" > "$work/chunk.tsv" 2> "$work/chunk.err" \
     || [ -s "$work/chunk.tsv" ]; then
    [ -z "$hdr" ] && hdr="$(head -1 "$work/chunk.tsv")"
    tail -n +2 "$work/chunk.tsv" >> "$raw"
  else
    echo "batch starting at ${chunk[0]} failed:" >&2; tail -5 "$work/chunk.err" >&2
  fi
  echo "  $((i + ${#chunk[@]}))/${#files[@]}" >&2
done
[ -n "$hdr" ] || { echo "no results; last errors:" >&2; cat "$work/chunk.err" >&2; exit 1; }

if [ -n "$out" ]; then { echo "$hdr"; cat "$raw"; } | emit "$family" > "$out"; echo "wrote $out" >&2; else { echo "$hdr"; cat "$raw"; } | emit "$family"; fi
