#!/usr/bin/env bash
# GPU host: Nsight Compute on the backward kernels of
# scripts/compile-bwd-profile.sh (KERNELS, default gpu-bwd-prof/) and on
# cuDNN's at the same shapes (bench/profile_backward.py, one launch each,
# --set full). Writes $OUT/profile.txt (the details page of every kernel)
# and $OUT/stalls.txt (each attn kernel's 25 SASS lines with the most
# stall samples, with their reasons); RUNS and CUDNN override the runs.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
KERNELS="${1:-gpu-bwd-prof}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
source scripts/gpu-build-runtime.sh
build_gpu_runtime build-gpu attn_runtime
RUNS=${RUNS:-d256_tdkv:4096,d256_tdkv_det:4096,d256c_tdkv:8192,d256c_tdkv_det:8192,d128:8192,d128c:16384}
CUDNN=${CUDNN:-d256_tdkv:4096,d256c_tdkv:8192,d128:8192}
REP=/tmp/attn-bwd-prof
ATTN_RUNTIME_LIB="$ROOT/build-gpu/lib/libattn_runtime.so" \
  timeout "${PROFILE_TIMEOUT:-420}" ncu --profile-from-start off --set full \
  --import-source no -f -o "$REP" \
  python3 bench/profile_backward.py --kernels "$KERNELS/prof" --runs "$RUNS" \
  --cudnn "$CUDNN" >"$OUT/ncu.log" 2>&1 || echo "!! ncu rc=$? (see ncu.log)"
tail -5 "$OUT/ncu.log"
ncu -i "$REP.ncu-rep" --page details >"$OUT/profile.txt" 2>&1
ncu -i "$REP.ncu-rep" --page raw --csv \
  --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,launch__registers_per_thread,launch__shared_mem_per_block_dynamic,launch__grid_size,launch__block_size,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed \
  >"$OUT/summary.csv" 2>&1
ncu -i "$REP.ncu-rep" --page raw --csv --kernel-name regex:dkdv \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio \
  >"$OUT/stall-reasons.csv" 2>&1
python3 - "$OUT/stall-reasons.csv" <<'PY' || true
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))[1:]
for r in rows:
    st = sorted(((float(v), k.split("stalled_")[1].split("_per")[0])
                 for k, v in r.items() if "stalled_" in k and v not in ("", "n/a")),
                reverse=True)[:7]
    print(r["Kernel Name"][:50], " ".join(f"{n}={v:.2f}" for v, n in st))
PY
python3 - "$REP.ncu-rep" "$OUT" <<'PY' || echo "!! stall summary failed"
import csv, io, subprocess, sys
rep, out = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(f"{out}/summary.csv")))
print(f"{'kernel':60s} {'us':>8s} {'gmma%':>6s} {'issue%':>6s} {'L2%':>5s} {'red Msec':>8s} {'regs':>4s}")
for r in rows[1:] if rows and rows[0].get("ID") == "" else rows:
    try:
        print(f"{r['Kernel Name'][:60]:60s} {float(r['gpu__time_duration.sum'])/1e3:8.1f} "
              f"{r['sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active']:>6s} "
              f"{r['smsp__issue_active.avg.pct_of_peak_sustained_active']:>6s} "
              f"{r['lts__throughput.avg.pct_of_peak_sustained_elapsed']:>5s} "
              f"{float(r['lts__t_sectors_op_red.sum'].replace(',',''))/1e6:8.1f} "
              f"{r['launch__registers_per_thread']:>4s}")
    except (KeyError, ValueError) as e:
        pass
with open(f"{out}/stalls.txt", "w") as f:
    for r in rows:
        if "dkdv" not in r.get("Kernel Name", ""):
            continue
        kid = r["ID"]
        src = subprocess.run(["ncu", "-i", rep, "--page", "source", "--csv",
                              "--print-source", "sass", "--kernel-id", f"::regex:^{r['Kernel Name']}$:1" ,
                              "--print-kernel-base", "function"],
                             capture_output=True, text=True).stdout
        f.write(f"=== {kid} {r['Kernel Name']}\n")
        lines = [l for l in src.splitlines() if l.count(",") > 5]
        try:
            rd = list(csv.DictReader(io.StringIO("\n".join(lines))))
            key = next(k for k in rd[0] if "Warp Stall Sampling (All" in k)
            rd.sort(key=lambda x: -float(x[key].replace(",", "") or 0))
            tot = sum(float(x[key].replace(",", "") or 0) for x in rd)
            for x in rd[:25]:
                v = float(x[key].replace(",", "") or 0)
                f.write(f"{100*v/tot:5.1f}% {x.get('Address','')} {x.get('Source','')[:90]}\n")
        except Exception as e:
            f.write(f"(no source page: {e}; {src[:300]})\n")
PY
head -c 3000 "$OUT/stalls.txt"
