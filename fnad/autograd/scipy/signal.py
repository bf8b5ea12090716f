"""autograd.scipy.signal on fnad: autograd's tensor `convolve(A, B, axes=None,
dot_axes=[(), ()], mode="full")` (not SciPy's signature), written with fnad.numpy so that
every transform differentiates it. `axes` pairs the convolved axes of A and B, `dot_axes`
the axes summed over; the output's axes are A's others, B's others, then the convolved
ones. Other names come from fnad.scipy.signal."""

import itertools

import fnad.numpy as fnp
import fnad.scipy.signal as _fsig

from .._namespace import forwarding as _forwarding

__all__ = ["convolve"]

__getattr__ = _forwarding(__name__, _fsig)


def _out_range(na, nb, mode):
    """(start, size) of the output within the full convolution of lengths na and nb."""
    if mode == "full":
        return 0, na + nb - 1
    if mode == "valid":
        return min(na, nb) - 1, abs(na - nb) + 1
    return (nb - 1) // 2, na  # "same": centred, A's length


def convolve(A, B, axes=None, dot_axes=((), ()), mode="full"):
    """The convolution of A and B along `axes`, contracting `dot_axes` (autograd's)."""
    if mode not in ("valid", "full", "same"):
        raise ValueError(f"convolve: mode {mode!r} undefined; use 'valid', 'full' or 'same'.")
    A, B = fnp.asarray(A), fnp.asarray(B)
    if axes is None:
        axes = (range(A.ndim), range(A.ndim))
    conv_a, conv_b = list(axes[0]), list(axes[1])
    dot_a, dot_b = list(dot_axes[0]), list(dot_axes[1])
    if len(conv_a) != len(conv_b) or len(dot_a) != len(dot_b):
        raise ValueError(f"convolve: axes {axes} and dot_axes {dot_axes} must pair A's axes "
                         "with B's one to one.")
    na = [A.shape[i] for i in conv_a]
    nb = [B.shape[i] for i in conv_b]
    if mode == "valid" and not (all(a >= b for a, b in zip(na, nb))
                                or all(a <= b for a, b in zip(na, nb))):
        raise ValueError("convolve: one array must be larger than the other along all "
                         f"convolved dimensions for mode='valid' (got {na} and {nb}).")
    keep_a = [i for i in range(A.ndim) if i not in conv_a + dot_a]
    keep_b = [i for i in range(B.ndim) if i not in conv_b + dot_b]
    A = fnp.transpose(A, keep_a + dot_a + conv_a)
    B = fnp.transpose(B, keep_b + dot_b + conv_b)
    lead_a, lead_b = len(keep_a) + len(dot_a), len(keep_b) + len(dot_b)
    ranges = [_out_range(a, b, mode) for a, b in zip(na, nb)]
    A = fnp.pad(A, [(0, 0)] * lead_a + [(b - 1, b - 1) for b in nb])
    sum_a = list(range(len(keep_a), lead_a))
    sum_b = list(range(len(keep_b), lead_b))
    # im2col: every offset k of B's window stacked on a last axis of A's shifted slices
    # (full[n] = sum_k A[n - k] B[k]; A is padded by nb - 1 in front), then one tensordot
    offsets = list(itertools.product(*[range(b) for b in nb]))
    windows = fnp.stack([
        A[(slice(None),) * lead_a + tuple(slice(s + b - 1 - ki, s + b - 1 - ki + size)
                                          for (s, size), b, ki in zip(ranges, nb, k))]
        for k in offsets], axis=-1)
    B = fnp.reshape(B, tuple(B.shape[:lead_b]) + (len(offsets),))
    out = fnp.tensordot(windows, B, axes=(sum_a + [windows.ndim - 1], sum_b + [lead_b]))
    # tensordot leaves A's kept axes, the convolved ones, then B's kept axes
    n_keep_a, n_conv = len(keep_a), len(conv_a)
    order = (list(range(n_keep_a)) + list(range(n_keep_a + n_conv, out.ndim))
             + list(range(n_keep_a, n_keep_a + n_conv)))
    return fnp.transpose(out, order)
