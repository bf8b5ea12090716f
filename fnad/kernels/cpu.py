"""fnad.kernels.cpu: fused float32 CPU kernels on every core (numba), behind fnad_nn's
layer primitives: exact GELU and its cotangent, the attention softmax and its VJP, layer
normalisation and its VJP. Each returns None where it does not apply (see `available`);
the caller then runs its NumPy formulation. `FNAD_CPU_KERNELS=numpy` turns them off and
`FNAD_NUM_THREADS` sets their threads."""

from ._cpu import attention_softmax as attention_softmax
from ._cpu import available as available
from ._cpu import gelu as gelu
from ._cpu import gelu_grad_mul as gelu_grad_mul
from ._cpu import normalize as normalize
from ._cpu import normalize_vjp as normalize_vjp
from ._cpu import softmax_vjp as softmax_vjp
from ._threads import num_threads as num_threads
