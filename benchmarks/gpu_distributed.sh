#!/usr/bin/env bash
# fnad.distributed on a GPU machine (issue 23); benchmarks/gpu_check.sh calls it, or run it
# alone from the repository root:  bash benchmarks/gpu_distributed.sh
#   1. NCCL (cupyx.distributed): `mpiexec -n <GPUs>`, one process per GPU (on a one-GPU
#      machine a one-process NCCL communicator, which still makes every NCCL call);
#   2. the host-memory fallback (FNAD_NCCL=0): `mpiexec -n 2`, processes sharing the GPUs;
#   3. CUDA-aware MPI only when the caller sets FNAD_CUDA_AWARE_MPI=1 (pip's MPICH is not
#      CUDA-aware, so it is not run by default).
# Each run checks the collectives on CuPy arrays against NumPy through MPI, runs 5
# data-parallel GPT steps on the GPU against one process, and times a 32 MiB psum.
# Installs nothing; skips (exit 0) without mpiexec, mpi4py or a GPU. Logs go to $OUT.
set -u
cd "$(dirname "$0")/.."
OUT="${OUT:-./gpu_out}"
mkdir -p "$OUT"
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
PY="${PYTHON:-python}"   # the interpreter: $PYTHON, else python on PATH
if ! command -v mpiexec > /dev/null || ! "$PY" -c "import mpi4py" 2> /dev/null; then
  echo "distributed: no mpiexec or mpi4py (pip install mpi4py mpich): skipped"
  exit 0
fi
gpus=$(python -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2> /dev/null || echo 0)
if [ "$gpus" -lt 1 ]; then
  echo "distributed: no GPU visible to CuPy: skipped"
  exit 0
fi
status=0
run() {  # name, processes, environment assignments...
  local name=$1 n=$2
  shift 2
  echo "-- distributed: $name ($n processes)"
  env "$@" timeout 240 mpiexec -n "$n" "$PY" tests/distributed/jobs/gpu.py --bench \
    > "$OUT/distributed_$name.log" 2>&1
  local rc=$?
  grep -E '^ok|^\{' "$OUT/distributed_$name.log"
  echo "distributed $name: exit $rc"
  [ $rc -eq 0 ] || { tail -n 30 "$OUT/distributed_$name.log"; status=1; }
}
run nccl "$gpus"   # NCCL where cupyx.distributed has it (the log names the transport)
run host 2 FNAD_NCCL=0
if [ "${FNAD_CUDA_AWARE_MPI:-0}" = "1" ]; then
  run cuda_aware_mpi 2 FNAD_NCCL=0 FNAD_CUDA_AWARE_MPI=1
fi
exit $status
