"""Discrete Fourier transforms (numpy.fft's names and signatures) and their rules.

Three primitives do the work, each on axes whose lengths they keep (`n`/`s` pad or crop
with fnp.pad and slicing first, so those steps are differentiated by their own rules):

- `_fft_p`: a complex-to-complex transform over `axes` (forward or inverse). It is linear
  and its matrix is symmetric, so its VJP is the same transform of the cotangent (JAX's
  convention: the transpose, not the conjugate transpose).
- `_rfft_p`: a real-to-half-complex transform along one axis: the first n // 2 + 1 rows of
  the DFT matrix. Its VJP is the real part of the full transform of the zero-padded
  cotangent.
- `_irfft_p`: half-complex to real along one axis, of output length n. It is only
  real-linear: y = Re(sum_k w_k c_k e^(2 pi i jk / n)) (scaled by `norm`), with the
  Hermitian weights w_k = 2 for the bins that stand for a conjugate pair and 1 for the
  zero (and, for even n, the Nyquist) bin. Its VJP is w * conj(rfft(g)) with the opposite
  normalisation.
"""

import warnings

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray
from .._core.backend import array_module, cupy_or_none
from .._batching.families import to_front
from .._core.rules import defabstract_eval, defbatch, defjvp_linear, defvjp
from ._util import dtype_of, ndim, shape, wrap

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}

# ----------------------------------------------------------------------------- primitives


def _fft_impl(x, axes, norm, inverse):
    xp = array_module(x)
    return (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)


def _rfft_impl(x, axis, norm):
    return array_module(x).fft.rfft(x, axis=axis, norm=norm)


def _irfft_impl(x, axis, n, norm):
    return array_module(x).fft.irfft(x, n=n, axis=axis, norm=norm)


_fft_p = wrap(_fft_impl, "fft")
_rfft_p = wrap(_rfft_impl, "rfft")
_irfft_p = wrap(_irfft_impl, "irfft")


def _complex_dtype(dtype):
    """The complex dtype NumPy's fft computes in for a `dtype` input (float32 stays single)."""
    return np.result_type(dtype, np.complex64 if dtype in (np.float32, np.float16)
                          else np.complex128)


def _hermitian_weights(n, m, dtype, xp=np):
    """[1, 2, ..., 2, 1 or 2] of length m = n // 2 + 1: the Nyquist bin (even n) counts once;
    made by `xp` (on the device of the arrays it weighs)."""
    w = xp.full(m, 2.0, dtype=np.finfo(dtype).dtype)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _vjp_rfft(g, ans, x, axis, norm):
    n = shape(x)[axis]
    full = _resize(g, axis, n)  # the half spectrum, zero-padded to the full length
    return fnp.real(_fft_p(full, axes=(axis,), norm=norm, inverse=False))


def _vjp_irfft(g, ans, x, axis, n, norm):
    m = shape(x)[axis]
    w = _hermitian_weights(n, m, dtype_of(ans), array_module(g))
    w = w.reshape((m,) + (1,) * (ndim(x) - 1 - axis))
    return fnp.conj(_rfft_p(g, axis=axis, norm=_SWAP[norm])) * w


def _batch_fft(fft, name):
    """The rule of a transform over given axes (`axes` or `axis`): the batch axis goes first
    and the non-negative axes shift by one (negative ones still count from the end)."""
    def rule(args, dims, **kw):
        (x,), (d,) = args, dims
        if name == "axes":
            kw["axes"] = tuple(a + 1 if a >= 0 else a for a in kw["axes"])
        elif kw[name] >= 0:
            kw[name] = kw[name] + 1
        return fft(to_front(x, d), **kw), 0
    return rule


defvjp(_fft_p, lambda g, ans, x, axes, norm, inverse: _fft_p(g, axes=axes, norm=norm,
                                                             inverse=inverse))
defjvp_linear(_fft_p)
defbatch(_fft_p, _batch_fft(_fft_p, "axes"))
defvjp(_rfft_p, _vjp_rfft)
defjvp_linear(_rfft_p)
defbatch(_rfft_p, _batch_fft(_rfft_p, "axis"))
defvjp(_irfft_p, _vjp_irfft)
defjvp_linear(_irfft_p)
defbatch(_irfft_p, _batch_fft(_irfft_p, "axis"))

# ----------------------------------------------------------------------------- abstract evaluation


def _fft_aval(x, axes, norm, inverse):
    return ShapedArray(x.shape, _complex_dtype(x.dtype), xp=x.xp)


def _rfft_aval(x, axis, norm):
    s = list(x.shape)
    s[axis] = s[axis] // 2 + 1
    return ShapedArray(s, _complex_dtype(x.dtype), xp=x.xp)


def _irfft_aval(x, axis, n, norm):
    s = list(x.shape)
    s[axis] = n
    return ShapedArray(s, np.finfo(_complex_dtype(x.dtype)).dtype, xp=x.xp)


defabstract_eval(_fft_p, _fft_aval)
defabstract_eval(_rfft_p, _rfft_aval)
defabstract_eval(_irfft_p, _irfft_aval)

# ----------------------------------------------------------------------------- argument checks


def _norm(fname, norm):
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(f"fnad.numpy.fft.{fname}: invalid norm value {norm!r}; should be "
                         "'backward', 'ortho' or 'forward' (or None, which is 'backward').")
    return norm


def _axis(fname, axis, nd):
    if not -nd <= axis < nd:
        raise ValueError(f"fnad.numpy.fft.{fname}: axis {axis} is out of bounds for an array of "
                         f"dimension {nd}.")
    return axis % nd


def _length(fname, n):
    if int(n) != n or n < 1:
        raise ValueError(f"fnad.numpy.fft.{fname}: invalid number of FFT data points ({n}) "
                         "specified; pass a positive integer n (or None for the input's length).")
    return int(n)


def _check_input(fname, a):
    if ndim(a) == 0:
        raise ValueError(f"fnad.numpy.fft.{fname}: the input must have at least one axis, got a "
                         "0-d array; reshape it with fnp.atleast_1d.")


def _check_real(fname, a):
    if dtype_of(a).kind == "c":
        raise TypeError(f"fnad.numpy.fft.{fname}: the input must be real, got dtype "
                        f"{dtype_of(a)}; use fnp.fft.fft/fftn for complex inputs (or take "
                        "fnp.real of it first).")


def _resize(x, axis, n):
    """`x` cropped or zero-padded along `axis` to length `n`."""
    have = shape(x)[axis]
    if have == n:
        return x
    if have > n:
        return x[(slice(None),) * axis + (slice(0, n),)]
    widths = [(0, 0)] * ndim(x)
    widths[axis] = (0, n - have)
    return fnp.pad(x, widths)


def _cook_nd(fname, a, s, axes, invreal=False):
    """numpy.fft's `s` and `axes` defaults: (sizes, non-negative axes)."""
    _check_input(fname, a)
    nd = ndim(a)
    if s is not None and axes is None:
        warnings.warn(f"fnad.numpy.fft.{fname}: `axes` should not be None if `s` is not None "
                      "(deprecated in NumPy 2.0); pass axes explicitly, e.g. axes=range(-len(s), "
                      "0) for the last len(s) axes.", DeprecationWarning, stacklevel=3)
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(nd)
    axes = [_axis(fname, ax, nd) for ax in axes]
    if s is None:
        sizes = [shape(a)[ax] for ax in axes]
        if invreal and axes:
            sizes[-1] = 2 * (sizes[-1] - 1)
    else:
        if len(s) != len(axes):
            raise ValueError(f"fnad.numpy.fft.{fname}: s has {len(s)} entries but there are "
                             f"{len(axes)} axes; give one size per transformed axis.")
        sizes = [shape(a)[ax] if k == -1 else k for k, ax in zip(s, axes)]
    return [_length(fname, k) for k in sizes], axes


# ----------------------------------------------------------------------------- complex transforms


def _c2c_nd(fname, a, s, axes, norm, inverse):
    sizes, axes = _cook_nd(fname, a, s, axes)
    norm = _norm(fname, norm)
    if len(set(axes)) != len(axes):  # NumPy transforms a repeated axis once per mention
        out = a
        for k, ax in zip(sizes[::-1], axes[::-1]):
            out = _fft_p(_resize(out, ax, k), axes=(ax,), norm=norm, inverse=inverse)
        return out
    for k, ax in zip(sizes, axes):
        a = _resize(a, ax, k)
    return _fft_p(a, axes=tuple(axes), norm=norm, inverse=inverse)


def _c2c_1d(fname, a, n, axis, norm, inverse):
    _check_input(fname, a)
    return _c2c_nd(fname, a, None if n is None else [n], [axis], norm, inverse)


def fft(a, n=None, axis=-1, norm=None):
    """One-dimensional discrete Fourier transform (numpy.fft.fft): `n` crops or zero-pads
    the input along `axis`; `norm` is "backward" (default), "ortho" or "forward".

    Example:
      fnp.fft.fft(x)                     # complex spectrum along the last axis
      fnp.fft.fft(x, n=8, norm="ortho")  # zero-padded to 8 points, unitary scaling
    """
    return _c2c_1d("fft", a, n, axis, norm, False)


def ifft(a, n=None, axis=-1, norm=None):
    """One-dimensional inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _c2c_1d("ifft", a, n, axis, norm, True)


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform over `axes` (all by default), the input
    cropped or zero-padded to the sizes `s` (numpy.fft.fftn)."""
    return _c2c_nd("fftn", a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse discrete Fourier transform (numpy.fft.ifftn)."""
    return _c2c_nd("ifftn", a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform (numpy.fft.fft2)."""
    return _c2c_nd("fft2", a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional inverse discrete Fourier transform (numpy.fft.ifft2)."""
    return _c2c_nd("ifft2", a, s, axes, norm, True)


# ----------------------------------------------------------------------------- real transforms


def _rfft_nd(fname, a, s, axes, norm):
    _check_real(fname, a)
    sizes, axes = _cook_nd(fname, a, s, axes)
    if not axes:
        raise ValueError(f"fnad.numpy.fft.{fname}: at least one axis must be transformed.")
    norm = _norm(fname, norm)
    out = _rfft_p(_resize(a, axes[-1], sizes[-1]), axis=axes[-1], norm=norm)
    if len(axes) > 1:
        out = _c2c_nd(fname, out, sizes[:-1], axes[:-1], norm, False)
    return out


def _irfft_nd(fname, a, s, axes, norm):
    sizes, axes = _cook_nd(fname, a, s, axes, invreal=True)
    if not axes:
        raise ValueError(f"fnad.numpy.fft.{fname}: at least one axis must be transformed.")
    norm = _norm(fname, norm)
    if len(axes) > 1:
        a = _c2c_nd(fname, a, sizes[:-1], axes[:-1], norm, True)
    n = sizes[-1]
    return _irfft_p(_resize(a, axes[-1], n // 2 + 1), axis=axes[-1], n=n, norm=norm)


def rfft(a, n=None, axis=-1, norm=None):
    """Discrete Fourier transform of a real input, the n // 2 + 1 non-negative frequency
    terms (numpy.fft.rfft).

    Example:
      spec = fnp.fft.rfft(signal)          # shape (..., n // 2 + 1), complex
      back = fnp.fft.irfft(spec, n=shape(signal)[-1])
    """
    _check_input("rfft", a)
    return _rfft_nd("rfft", a, None if n is None else [n], [axis], norm)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of rfft: `n` real points (default 2 * (m - 1) for m input terms) from the
    non-negative frequency terms (numpy.fft.irfft). The imaginary parts of the zero (and,
    for even n, the Nyquist) terms do not enter the result, so they get zero gradient."""
    _check_input("irfft", a)
    return _irfft_nd("irfft", a, None if n is None else [n], [axis], norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform of a real input (numpy.fft.rfftn): a real
    transform along the last of `axes`, complex ones along the others."""
    return _rfft_nd("rfftn", a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of rfftn (numpy.fft.irfftn); give `s` to recover an odd last length."""
    return _irfft_nd("irfftn", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform of a real input (numpy.fft.rfft2)."""
    return _rfft_nd("rfft2", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of rfft2 (numpy.fft.irfft2)."""
    return _irfft_nd("irfft2", a, s, axes, norm)


# ----------------------------------------------------------------------------- helpers


def _shift_axes(x, axes):
    if axes is None:
        return tuple(range(ndim(x)))
    return tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)


def fftshift(x, axes=None):
    """Move the zero-frequency term to the centre (numpy.fft.fftshift); a roll, so
    differentiable."""
    axes = _shift_axes(x, axes)
    if not axes:
        return x
    return fnp.roll(x, [shape(x)[ax] // 2 for ax in axes], axes)


def ifftshift(x, axes=None):
    """The inverse of fftshift (numpy.fft.ifftshift)."""
    axes = _shift_axes(x, axes)
    if not axes:
        return x
    return fnp.roll(x, [-(shape(x)[ax] // 2) for ax in axes], axes)


def _xp_for(device):
    if device in (None, "cpu"):
        return np
    if device == "gpu":
        xp = cupy_or_none()
        if xp is None:
            raise RuntimeError("fnad.numpy.fft: device='gpu' asked for, but no GPU is usable "
                               "(see fnad.devices()).")
        return xp
    raise ValueError(f"fnad.numpy.fft: device must be None, 'cpu' or 'gpu', got {device!r}.")


def fftfreq(n, d=1.0, device=None):
    """Sample frequencies of an n-point fft with sample spacing `d` (numpy.fft.fftfreq);
    constants, with no gradient."""
    return _xp_for(device).fft.fftfreq(n, d)


def rfftfreq(n, d=1.0, device=None):
    """Sample frequencies of an n-point rfft with sample spacing `d` (numpy.fft.rfftfreq)."""
    return _xp_for(device).fft.rfftfreq(n, d)
