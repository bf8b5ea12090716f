"""fnad.kernels: hand-written GPU kernels exposed as fnad primitives.

`matmul` is the worked example of adding your own kernel (docs/custom_kernels.md): a
CUDA kernel launched with `cupy.RawKernel` on CuPy arrays, NumPy on the CPU, and VJP/JVP
rules that call the same primitive, so derivatives of any order use the kernel.
`fnad.numpy.matmul` keeps using cuBLAS.
"""

from ._matmul import matmul as matmul
from ._matmul import matmul_autotune as matmul_autotune
