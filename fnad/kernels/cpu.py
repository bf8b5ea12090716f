"""fnad.kernels.cpu: fused float32 CPU kernels on every core (numba), behind fnad_nn's
layer primitives: exact GELU and its cotangent, the attention softmax and its VJP, layer
normalisation and its VJP. Each returns None where it does not apply (see `available`);
the caller then runs its NumPy formulation. `FNAD_CPU_KERNELS=numpy` turns them off.

Also fnad's one thread pool (fnad/kernels/_threads.py), for your own kernels and passes
(fnad_nn's use it): `run_ranges`, `parallel_map`, `parallel_rows`, per-thread `scratch`,
`num_threads` and `set_threads` (`FNAD_NUM_THREADS` sets the threads)."""

from ._cpu import attention_softmax as attention_softmax
from ._cpu import available as available
from ._cpu import gelu as gelu
from ._cpu import gelu_grad_mul as gelu_grad_mul
from ._cpu import normalize as normalize
from ._cpu import normalize_vjp as normalize_vjp
from ._cpu import softmax_vjp as softmax_vjp
from ._threads import num_threads as num_threads
from ._threads import parallel_map as parallel_map
from ._threads import parallel_rows as parallel_rows
from ._threads import run_ranges as run_ranges
from ._threads import scratch as scratch
from ._threads import set_threads as set_threads
