#!/usr/bin/env bash
# The GPU checks in one run (under 8 minutes on one GPU; installs nothing):
#   1. the GPU-marked tests in tests/backend: the fnad.numpy op battery on CuPy against
#      NumPy (tests/numpy/cases.py), transforms staying on the GPU without host copies,
#      device moves and mismatch errors, checkpoints onto the GPU, bit-identical PRNG on
#      CPU and GPU, the custom matmul kernel against cuBLAS and its gradients;
#   2. the kernel's CPU emulation tests (fast sanity check of the same source);
#   3. benchmarks/matmul.py (CPU NumPy, cuBLAS FP32 without TF32, fnad's kernel);
#   4. benchmarks/gpu_distributed.sh: fnad.distributed's NCCL and host-memory paths.
# Logs, the JUnit XML and the benchmark CSV/plot go to $OUT (default ./gpu_out).
# Run from the repository root:  bash benchmarks/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-./gpu_out}"
mkdir -p "$OUT"
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"
export CUPY_TF32=0
status=0
start=$(date +%s)

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  python -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
  python -c 'import cupy; print("cupy", cupy.__version__, "cuda runtime", cupy.cuda.runtime.runtimeGetVersion())' 2>&1
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
} > "$OUT/env.txt"
cat "$OUT/env.txt"

echo "== 1. GPU tests (pytest -m gpu tests/backend)"
timeout 330 python -m pytest -m gpu -p no:cacheprovider -q -rfEsx --durations=15 \
  --junitxml="$OUT/pytest_gpu.xml" tests/backend > "$OUT/pytest_gpu.log" 2>&1
rc=$?; echo "pytest gpu: exit $rc"; [ $rc -eq 0 ] || status=1
tail -n 40 "$OUT/pytest_gpu.log"

echo "== 2. kernel CPU emulation (pytest tests/backend/test_kernel_emulation.py)"
timeout 60 python -m pytest -p no:cacheprovider -q tests/backend/test_kernel_emulation.py \
  > "$OUT/pytest_emulation.log" 2>&1
rc=$?; echo "emulation: exit $rc"; [ $rc -eq 0 ] || [ $rc -eq 5 ] || status=1

echo "== 3. matmul benchmark"
timeout 150 python benchmarks/matmul.py --out "$OUT" 2>&1 | tee "$OUT/benchmark_matmul.log"
rc=${PIPESTATUS[0]}; echo "benchmark: exit $rc"; [ $rc -eq 0 ] || status=1

# ---- fnad.distributed (issue 23): NCCL and host-memory collectives on CuPy arrays ----
echo "== 4. distributed (benchmarks/gpu_distributed.sh)"
bash benchmarks/gpu_distributed.sh || status=1
# ---- end fnad.distributed ----

echo "== done in $(( $(date +%s) - start )) s, status $status; logs in $OUT"
exit $status
