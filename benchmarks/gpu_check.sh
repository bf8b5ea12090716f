#!/usr/bin/env bash
# The GPU checks in one run: under 8 minutes on one GPU, from the source tree (PYTHONPATH=.;
# installs nothing: numpy, cupy, pytest, hypothesis and torch are all it uses).
#   1. the `-m gpu` tests: transforms staying on the GPU without host copies, device moves
#      and mismatch errors, checkpoints onto the GPU, PRNG bits equal on CPU and GPU, the
#      custom matmul kernel against cuBLAS and its gradients, fnad_optim on CuPy
#      (tests/backend, tests/optim/test_gpu.py; the op battery is stage 2);
#   2. the op battery on CuPy: forward, VJP and JVP of every fnad.numpy and fnad.scipy op
#      against NumPy (tests/backend/test_gpu_ops.py, the sample the simulated device runs);
#   3. the GPT training step, fnad eager and fnad.jit on CuPy against PyTorch on CUDA, the
#      jitted step checked to make no host sync (benchmarks/gpu_gpt_step.py);
#   4. fnad's matmul kernel against cuBLAS FP32 at n = 1024, 2048, 4096 (benchmarks/matmul.py);
#   5. the NCCL path of fnad.distributed in one process: benchmarks/gpu_distributed.sh, run as
#      `OUT=<scratch dir> bash benchmarks/gpu_distributed.sh` when it exists (its output is
#      kept in distributed.log).
# Each stage has a time limit inside the 8 minutes; one that fails or runs out of time does
# not stop the others. Everything goes to $OUT (default ./gpu_out), 8 files, no folder:
# summary.txt, pytest_gpu.log, battery.log, gpt_step.log, gpu_gpt_step.json, matmul.log,
# benchmark_matmul.csv, distributed.log. Exit status 0 when every stage passed.
#
#   bash benchmarks/gpu_check.sh              # on the GPU machine, from the repository root
#   PYTHON=/path/to/venv/bin/python bash benchmarks/gpu_check.sh   # another interpreter
#   bash benchmarks/gpu_check.sh --dry-run    # anywhere: checks that everything it would run
#       imports and is collected (pytest --collect-only with the packages the GPU machine
#       lacks blocked, the GPT step on the simulated device of tests/simdevice, the matmul
#       benchmark on a tiny size, the distributed hook's syntax); tests/backend/
#       test_gpu_check.py runs it in the default suite.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-./gpu_out}"
mkdir -p "$OUT"
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"
export CUPY_TF32=0
PY="${PYTHON:-python}"   # the interpreter: $PYTHON (the tests pass theirs), else python on PATH
DRY=0
[ "${1:-}" = "--dry-run" ] && DRY=1
BUDGET=470    # seconds, of the 480 allowed
start=$(date +%s)
status=0
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"

say() { echo "$*" | tee -a "$SUMMARY"; }

left() { echo $(( BUDGET - ($(date +%s) - start) )); }

# stage NAME LIMIT LOG CMD...: run CMD with at most LIMIT seconds (less if the budget is
# nearly spent), output to LOG; one summary line with its exit status and the log's last line
stage() {
  local name=$1 limit=$2 log=$3
  shift 3
  local t=$(left)
  if [ "$t" -lt 20 ]; then
    say "$name: SKIPPED (out of time)"; status=1; return
  fi
  [ "$limit" -gt $(( t - 5 )) ] && limit=$(( t - 5 ))
  local t0=$(date +%s)
  timeout "$limit" "$@" > "$log" 2>&1
  local rc=$?
  local verdict="ok"
  if [ $rc -eq 124 ]; then verdict="TIMED OUT after ${limit} s"; status=1;
  elif [ $rc -ne 0 ]; then verdict="FAILED (exit $rc)"; status=1; fi
  say "$name: $verdict in $(( $(date +%s) - t0 )) s; $(grep -v '^\s*$' "$log" | tail -n 1)"
}

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  "$PY" -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
  "$PY" -c 'import cupy; print("cupy", cupy.__version__, "cuda runtime", cupy.cuda.runtime.runtimeGetVersion())' 2>&1 | tail -n 1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 2
} >> "$SUMMARY"
cat "$SUMMARY"

GPU_TESTS="tests/backend tests/optim/test_gpu.py"
BATTERY="tests/backend/test_gpu_ops.py"

if [ $DRY -eq 1 ]; then
  say "== dry run: imports and collection, no GPU needed"
  # The GPU machine has no scipy, mpmath, numba, numexpr, matplotlib or tqdm: collect as there.
  stage "collect -m gpu tests" 120 "$OUT/pytest_gpu.log" "$PY" - $GPU_TESTS <<'EOF'
import sys
for name in ("scipy", "mpmath", "numba", "numexpr", "matplotlib", "tqdm"):
    sys.modules[name] = None  # `import name` raises ImportError, as on the GPU machine
import pytest
paths = sys.argv[1:]
code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", "gpu and not slow",
                    *paths])
from tests.simdevice.test_ops import DEFAULT
print(f"collect: exit {code}; the battery holds {len(DEFAULT)} cases")
sys.exit(code)
EOF
  stage "GPT step on the simulated device" 120 "$OUT/gpt_step.log" \
    "$PY" benchmarks/gpu_gpt_step.py --dry-run --out "$OUT"
  stage "matmul benchmark (CPU, n = 64)" 60 "$OUT/matmul.log" \
    "$PY" benchmarks/matmul.py --sizes 64 --cpu-max 64 --min-time 0.01 --reps 2 --no-plot \
    --out "$OUT"
  if [ -f benchmarks/gpu_distributed.sh ]; then
    stage "distributed hook (syntax)" 10 "$OUT/distributed.log" bash -n benchmarks/gpu_distributed.sh
  else
    say "distributed hook: benchmarks/gpu_distributed.sh not present (nothing to run)"
  fi
  say "== dry run done in $(( $(date +%s) - start )) s, status $status"
  exit $status
fi

say "== 1. GPU tests (pytest -m gpu, op battery apart)"
stage "gpu tests" 110 "$OUT/pytest_gpu.log" "$PY" -m pytest -m "gpu and not slow" \
  -p no:cacheprovider -q -rfEsx --durations=10 --ignore="$BATTERY" $GPU_TESTS

say "== 2. op battery on CuPy"
stage "op battery" 170 "$OUT/battery.log" "$PY" -m pytest -m "gpu and not slow" \
  -p no:cacheprovider -q -rfE --durations=5 "$BATTERY"

say "== 3. GPT training step: fnad eager / jit on CuPy vs PyTorch CUDA"
stage "GPT step" 80 "$OUT/gpt_step.log" "$PY" benchmarks/gpu_gpt_step.py --out "$OUT"
"$PY" - "$OUT/gpu_gpt_step.json" >> "$SUMMARY" 2>/dev/null <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print("  " + ", ".join(f"{k} {r[k]:.3g}" for k in ("fnad eager (ms)", "fnad jit (ms)",
      "torch (ms)", "fnad eager / torch", "fnad jit / torch") if k in r))
EOF

say "== 4. matmul kernel vs cuBLAS FP32"
stage "matmul" 70 "$OUT/matmul.log" "$PY" benchmarks/matmul.py --sizes 1024 2048 4096 \
  --cpu-max 1024 --min-time 0.2 --reps 10 --no-plot --out "$OUT"
grep -E '^ *(1024|2048|4096) ' "$OUT/matmul.log" | sed 's/^/  /' >> "$SUMMARY"

say "== 5. fnad.distributed on NCCL, one process"
if [ -f benchmarks/gpu_distributed.sh ]; then
  scratch=$(mktemp -d)
  stage "distributed" 40 "$OUT/distributed.log" env OUT="$scratch" bash benchmarks/gpu_distributed.sh
  for f in "$scratch"/*; do  # whatever it wrote, inside distributed.log (8 files at most)
    [ -f "$f" ] && { echo "== $(basename "$f")"; head -c 200000 "$f"; } >> "$OUT/distributed.log"
  done
  rm -rf "$scratch"
else
  say "distributed: benchmarks/gpu_distributed.sh not present (nothing run)" \
    | tee "$OUT/distributed.log" > /dev/null
fi

say "== done in $(( $(date +%s) - start )) s, status $status; logs in $OUT"
exit $status
