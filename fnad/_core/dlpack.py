"""DLPack: arrays in and out of fnad without a copy (`fnad.from_dlpack`, `fnad.to_dlpack`).

fnad's arrays are NumPy (CPU) and CuPy (GPU) arrays, which speak DLPack themselves; these
two functions pick the right one by the producer's device and say what to do when that
is not possible. The result shares memory with its source: writing one changes the other.
"""

import numpy as np

from .backend import cupy_or_none, gpu_unavailable_reason, is_device_array
from .tracer import Tracer

__all__ = ["from_dlpack", "to_dlpack"]

_CPU = (1, 3)  # kDLCPU, kDLCUDAHost: memory NumPy can address


class _Capsule:
    """A legacy DLPack capsule (torch.utils.dlpack.to_dlpack's) as a CPU producer."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def _is_capsule(x):
    return type(x).__name__ == "PyCapsule"


def from_dlpack(x):
    """An fnad array (NumPy on the CPU, CuPy on a GPU) sharing `x`'s memory, no copy.

    Args:
      x: any DLPack producer: a torch tensor, a CuPy, JAX or NumPy array (anything with
        `__dlpack__` and `__dlpack_device__`), or a legacy DLPack capsule of CPU memory.

    Returns:
      A NumPy array for CPU memory, a CuPy array for GPU memory.

    Example:
      x = fnad.from_dlpack(torch.arange(4.0))     # a NumPy view of the tensor's memory
      y = fnad.numpy.tanh(x)
    """
    if isinstance(x, Tracer):
        raise TypeError("fnad.from_dlpack: the argument is a traced value; call it on "
                        "concrete tensors, outside jit/grad/vmap.")
    if _is_capsule(x):
        x = _Capsule(x)
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError(f"fnad.from_dlpack: a {type(x).__name__} is not a DLPack producer "
                        "(it has no __dlpack__/__dlpack_device__); pass a torch tensor, a "
                        "CuPy/JAX/NumPy array or a DLPack capsule.")
    device = int(x.__dlpack_device__()[0])
    if device in _CPU:
        return np.from_dlpack(x)
    xp = cupy_or_none()
    if xp is None:
        raise RuntimeError(f"fnad.from_dlpack: the tensor lives on DLPack device type "
                           f"{device} (not the CPU) and fnad has no GPU backend here: "
                           f"{gpu_unavailable_reason()}. Move it to the CPU first "
                           "(tensor.cpu()).")
    return xp.from_dlpack(x)


def to_dlpack(x):
    """A DLPack capsule of fnad array `x` (NumPy or CuPy), sharing its memory: hand it to
    `torch.from_dlpack`, `cupy.from_dlpack` or `torch.utils.dlpack.from_dlpack`.

    Frameworks that take the array itself (`torch.from_dlpack(x)`, `np.from_dlpack(x)`)
    need no capsule: NumPy and CuPy arrays are DLPack producers already.

    Example:
      t = torch.from_dlpack(fnad.to_dlpack(params["w"]))   # the same memory, as a tensor
    """
    if isinstance(x, Tracer):
        raise TypeError("fnad.to_dlpack: the argument is a traced value; export concrete "
                        "arrays, outside jit/grad/vmap.")
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if not (isinstance(x, np.ndarray) or is_device_array(x)):
        raise TypeError(f"fnad.to_dlpack: expected a NumPy or CuPy array, got "
                        f"{type(x).__name__}.")
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        raise BufferError("fnad.to_dlpack: the array is read-only, which DLPack cannot "
                          "share; pass a writeable array (x.copy()).")
    return x.__dlpack__()
