"""fnad.kernels: hand-written GPU kernels exposed as fnad primitives.

`matmul` is the worked example of adding your own kernel (docs/custom_kernels.md): a
CUDA kernel launched with `cupy.RawKernel` on CuPy arrays, NumPy on the CPU, and VJP/JVP
rules that call the same primitive, so derivatives of any order use the kernel.
`fnad.numpy.matmul` keeps using cuBLAS.
"""

from ._matmul import matmul as matmul
from ._matmul import matmul_autotune as matmul_autotune

from .._jit.kernels import set_runner as _set_runner
from ._threads import run_ranges as _run_ranges

_set_runner(_run_ranges)  # jit's large elementwise and row kernels split over this pool
