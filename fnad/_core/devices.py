"""Devices: where arrays live ("cpu" for NumPy, "gpu" for CuPy) and moving them.

fnad has no array type of its own, so a device is simply the backend of an array:
NumPy arrays live on "cpu", CuPy arrays on "gpu:<id>". Every primitive runs on the
backend of its inputs; nothing is moved implicitly. `device_put` and `to_numpy` are
the explicit moves. `device_put` is differentiable: its derivative moves the
cotangent back to where the input lived.
"""

import numpy as np

from .backend import cupy_or_none, gpu_unavailable_reason, is_device_array
from .tracer import Tracer, getval, primitive
from .tree import tree_map
from .abstract import ShapedArray
from .rules import defabstract_eval, defbatch, defjvp_linear, defvjp

__all__ = ["Device", "devices", "device_of", "device_put", "to_numpy", "parse_device",
           "block_until_ready"]


class Device:
    """A place arrays live: `Device("cpu")` or `Device("gpu", id)`. `str()` gives "cpu" or
    "gpu:0"; a Device compares equal to that string."""

    __slots__ = ("platform", "id")

    def __init__(self, platform, id=0):
        self.platform = platform
        self.id = id

    def __str__(self):
        if self.platform == "cpu":
            return "cpu"
        return "gpu" if self.id is None else f"gpu:{self.id}"

    def __repr__(self):
        return f"Device('{self}')"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = parse_device(other, check=False)
            except ValueError:
                return False
        return (isinstance(other, Device) and self.platform == other.platform
                and (self.platform == "cpu" or other.id is None or self.id == other.id))

    def __hash__(self):
        return hash(str(self))


_CPU = Device("cpu")


def _no_gpu_error(fname):
    return RuntimeError(
        f"{fname}: a GPU was asked for, but none can be used: {gpu_unavailable_reason()}. "
        "Install CuPy for your CUDA version (pip install cupy-cuda12x or cupy-cuda13x) on a "
        "machine with an NVIDIA GPU, or keep the arrays on 'cpu'.")


def devices(platform=None):
    """The devices fnad can use: the CPU first, then every GPU CuPy sees.

    Args:
      platform: None for all devices, or "cpu" / "gpu" to keep only those.

    Returns:
      A list of `Device`; `str(d)` is "cpu" or "gpu:<id>".

    Example:
      fnad.devices()          # [Device('cpu')] on a machine without CuPy
      fnad.devices("gpu")     # [] there; [Device('gpu:0')] on a one-GPU machine
    """
    if platform not in (None, "cpu", "gpu"):
        raise ValueError(f"fnad.devices: platform must be None, 'cpu' or 'gpu', got {platform!r}")
    out = [] if platform == "gpu" else [_CPU]
    cp = cupy_or_none()
    if cp is not None and platform != "cpu":
        out += [Device("gpu", i) for i in range(cp.cuda.runtime.getDeviceCount())]
    return out


def parse_device(device, check=True, fname="fnad.device_put"):
    """A `Device` from "cpu", "gpu", "gpu:<id>" (also "cuda", "cuda:<id>") or a `Device`.

    "gpu" without an id means the current CuPy device (id None until resolved). With
    `check`, asking for a GPU where none can be used raises a RuntimeError.
    """
    if isinstance(device, Device):
        d = device
    elif isinstance(device, str):
        name, _, idx = device.strip().lower().partition(":")
        if name == "cpu" and not idx:
            d = _CPU
        elif name in ("gpu", "cuda") and (not idx or idx.isdigit()):
            d = Device("gpu", int(idx) if idx else None)
        else:
            raise ValueError(f"{fname}: unknown device {device!r}; use 'cpu', 'gpu' or "
                             "'gpu:<id>' (see fnad.devices()).")
    else:
        raise TypeError(f"{fname}: device must be a string such as 'cpu' or 'gpu', or an "
                        f"fnad.Device; got {type(device).__name__}.")
    if check and d.platform == "gpu":
        cp = cupy_or_none()
        if cp is None:
            raise _no_gpu_error(fname)
        n = cp.cuda.runtime.getDeviceCount()
        if d.id is not None and d.id >= n:
            raise ValueError(f"{fname}: device gpu:{d.id} does not exist; this machine has "
                             f"{n} GPU(s): {[str(x) for x in devices('gpu')]}.")
    return d


def device_of(x):
    """The `Device` an array lives on (tracers looked through; scalars live on "cpu")."""
    x = getval(x)
    if is_device_array(x):
        return Device("gpu", x.device.id)
    return _CPU


def _put_impl(x, device):
    d = parse_device(device)
    if d.platform == "cpu":
        return x.get() if is_device_array(x) else x
    cp = cupy_or_none()
    if is_device_array(x):
        if d.id is None or x.device.id == d.id:
            return x
        with cp.cuda.Device(d.id):
            return x.copy()
    if d.id is None:
        return cp.asarray(x)
    with cp.cuda.Device(d.id):
        return cp.asarray(x)


_put = primitive(_put_impl, "device_put")
# The derivative of a move is the move back to where the input was.
defvjp(_put, lambda g, ans, x, device: _put(g, str(device_of(x))))
defjvp_linear(_put)
defbatch(_put, lambda args, dims, **kw: (_put(*args, **kw), dims[0]))  # the batch axis moves too


def _put_aval(x, device):
    """The same shape and dtype, in the array module of `device`."""
    d = parse_device(device)
    return ShapedArray(x.shape, x.dtype, x.weak_type, np if d.platform == "cpu" else cupy_or_none())


defabstract_eval(_put, _put_aval)


def _put_leaf(x, device):
    if isinstance(x, Tracer):
        return _put(x, device)
    if isinstance(x, np.generic):
        return x if device.platform == "cpu" else _put_impl(np.asarray(x), str(device))
    if isinstance(x, np.ndarray) or is_device_array(x):
        return _put_impl(x, str(device))
    return x  # Python scalars, None, strings: valid on every device


def _default_leaf(x):
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return np.asarray(x)
    return x


def device_put(x, device=None):
    """Move an array, or every array leaf of a pytree, to `device`.

    Args:
      x: an array, a Python scalar or a pytree of them (traced values are fine: the
        move is differentiable).
      device: "cpu", "gpu" (the current CuPy device), "gpu:<id>", or an item of
        `fnad.devices()`. None (JAX's default device): every array stays where it is
        (fnad moves nothing implicitly) and Python and NumPy scalars become 0-d NumPy
        arrays, as `jax.device_put(x)` makes them arrays.

    Returns:
      The same structure with NumPy arrays on "cpu" and CuPy arrays on a GPU. Arrays
      already there are returned as they are (no copy); Python scalars stay scalars.
      Asking for a GPU without CuPy or a CUDA device raises a RuntimeError.

    Example:
      params = fnad.device_put(params, "gpu")
      grads = fnad.grad(loss)(params, fnad.device_put(batch, "gpu"))   # runs on the GPU
    """
    if device is None:
        return tree_map(_default_leaf, x)
    d = parse_device(device)
    return tree_map(lambda leaf: _put_leaf(leaf, d), x)


def _ready_leaf(x):
    v = getval(x)
    if is_device_array(v):
        cupy_or_none().cuda.get_current_stream().synchronize()
    return x


def block_until_ready(x):
    """Wait until every array of the pytree `x` is computed, and return `x` (JAX's
    `jax.block_until_ready`). NumPy computes eagerly, so on "cpu" it returns at once; for
    CuPy arrays it waits for the current stream. Use it around timings.

    Example:
      t0 = time.perf_counter(); fnad.block_until_ready(step(params, batch))
    """
    tree_map(_ready_leaf, x)
    return x


def _to_numpy_leaf(x):
    if isinstance(x, Tracer):
        raise TypeError(
            f"fnad.to_numpy: a traced value ({type(x).__name__} of shape {x.shape}) would "
            "lose its derivative; call to_numpy outside the transformed function, or on "
            "fnad.stop_gradient(x) if dropping the derivative is intended.")
    if is_device_array(x):
        return x.get()
    if isinstance(x, (np.ndarray, np.generic)):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x)
    return x


def to_numpy(x):
    """Copy an array, or every array leaf of a pytree, to host NumPy arrays.

    CuPy arrays are copied to the host; NumPy arrays are returned as they are; Python
    scalars become 0-d NumPy arrays.

    Example:
      print(fnad.to_numpy(loss_on_gpu))
    """
    return tree_map(_to_numpy_leaf, x)
