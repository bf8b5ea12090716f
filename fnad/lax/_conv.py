"""`jax.lax`'s convolutions and their shape helpers, from fnad.numpy.

`conv_general_dilated` moves the operands to (N, spatial..., C) and (O, I, spatial...),
dilates and pads the input with `lax.pad`, gathers one strided slice of it per kernel
position (im2col) and contracts those with the kernel in one matrix product (one per
group; feature and batch groups are reshapes around it). Being built from fnad.numpy, it has every
transform's rules, to any order. `precision=` is accepted and ignored (docs/lax.md).
"""

import itertools
from typing import NamedTuple

import numpy as np

from .. import numpy as fnp
from .._core.abstract import aval_of
from ..numpy._precision import preferred_operands
from ._reduce import padtype_to_pads
from ._structural import pad

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations",
           "conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "conv_shape_tuple", "conv_general_shape_tuple", "conv_transpose_shape_tuple"]


class ConvDimensionNumbers(NamedTuple):
    """Where batch, feature and spatial axes sit (`jax.lax.ConvDimensionNumbers`): each spec
    lists the axis of (batch or out-feature, feature or in-feature, spatial...)."""
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _spec_perm(spec, first, second, rhs_spec):
    rest = sorted((i for i, c in enumerate(spec) if c not in (first, second)),
                  key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(first), spec.index(second)) + tuple(rest)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """`ConvDimensionNumbers` from None (NCHW, OIHW, NCHW), a ConvDimensionNumbers, or three
    strings such as `("NHWC", "HWIO", "NHWC")` (`jax.lax.conv_dimension_numbers`); spatial
    axes are matched between the strings by letter.

    Example:
      conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    """
    nd = len(lhs_shape)
    if len(rhs_shape) != nd or nd < 2:
        raise TypeError(f"conv_dimension_numbers: lhs {tuple(lhs_shape)} and rhs "
                        f"{tuple(rhs_shape)} need the same number (>= 2) of dimensions.")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str) and isinstance(rhs, str) and isinstance(out, str):
        specs_ok = (len(lhs) == len(rhs) == len(out) == nd
                    and {"N", "C"} <= set(lhs) and {"O", "I"} <= set(rhs)
                    and {"N", "C"} <= set(out)
                    and set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"})
        if not specs_ok:
            raise TypeError(f"conv_dimension_numbers: {dimension_numbers!r} do not describe "
                            f"{nd}-d operands: lhs and out strings hold N, C and the spatial "
                            "letters, rhs holds O, I and the same spatial letters.")
        return ConvDimensionNumbers(_spec_perm(lhs, "N", "C", rhs), _spec_perm(rhs, "O", "I", rhs),
                                    _spec_perm(out, "N", "C", rhs))
    return ConvDimensionNumbers(tuple(lhs), tuple(rhs), tuple(out))


def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) axis permutations of three layout strings such as
    `("NHWC", "HWIO", "NHWC")` (`jax.lax.conv_general_permutations`)."""
    lhs, rhs, out = dimension_numbers
    if not all(isinstance(s, str) for s in (lhs, rhs, out)):
        raise TypeError(f"conv_general_permutations: takes three layout strings, got "
                        f"{dimension_numbers!r}.")
    shape = (1,) * len(lhs)
    return tuple(conv_dimension_numbers(shape, shape, dimension_numbers))


def _spatial_pads(lhs_spatial, eff_kernel, strides, padding):
    if isinstance(padding, str):
        return padtype_to_pads(lhs_spatial, eff_kernel, strides, padding)
    pads = [(int(lo), int(hi)) for lo, hi in padding]
    if len(pads) != len(lhs_spatial):
        raise ValueError(f"lax.conv_general_dilated: padding {padding!r} needs one (low, high) "
                         f"pair per spatial axis ({len(lhs_spatial)}).")
    return pads


def _dilated(sizes, dilation):
    return tuple(0 if n == 0 else (n - 1) * d + 1 for n, d in zip(sizes, dilation))


def _check_groups(lhs_n, lhs_c, rhs_o, rhs_i, fgc, bgc):
    if fgc < 1 or bgc < 1 or (fgc > 1 and bgc > 1):
        raise ValueError(f"lax.conv_general_dilated: feature_group_count={fgc} and "
                         f"batch_group_count={bgc} must be positive, and at most one above 1.")
    if lhs_c != rhs_i * fgc or rhs_o % fgc:
        raise ValueError(f"lax.conv_general_dilated: the input has {lhs_c} features, the kernel "
                         f"{rhs_i} input features and {rhs_o} outputs; with feature_group_count="
                         f"{fgc} the input's features must be {rhs_i} * {fgc} and the outputs "
                         "a multiple of the group count.")
    if lhs_n % bgc or rhs_o % bgc:
        raise ValueError(f"lax.conv_general_dilated: batch {lhs_n} and output features {rhs_o} "
                         f"must both be multiples of batch_group_count={bgc}.")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """The general N-d convolution (`jax.lax.conv_general_dilated`, XLA's ConvGeneralDilated):
    a cross-correlation of `lhs` with the kernel `rhs` every `window_strides`, over `lhs`
    padded by `padding` ('VALID', 'SAME', 'SAME_LOWER' or `(low, high)` pairs) after
    `lhs_dilation` spreads it out; `rhs_dilation` spaces the kernel's taps (atrous).
    `dimension_numbers` as in `conv_dimension_numbers`; grouped by `feature_group_count`
    (depthwise when it equals the input features) or `batch_group_count`.

    Example:
      conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    """
    x, w = preferred_operands("lax.conv_general_dilated", (lhs, rhs), precision,
                              preferred_element_type)
    dn = conv_dimension_numbers(aval_of(x).shape, aval_of(w).shape, dimension_numbers)
    # channels last inside: (n, *spatial, c), so each tap is a (n * positions, c) block
    x = fnp.transpose(x, (dn.lhs_spec[0],) + tuple(dn.lhs_spec[2:]) + (dn.lhs_spec[1],))
    w = fnp.transpose(w, dn.rhs_spec)
    (n, *sp, c), (o, i, *ks) = aval_of(x).shape, aval_of(w).shape
    k = len(sp)
    strides = tuple(int(s) for s in window_strides)
    ldil = (1,) * k if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rdil = (1,) * k if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    if not len(strides) == len(ldil) == len(rdil) == k:
        raise ValueError(f"lax.conv_general_dilated: window_strides {strides}, lhs_dilation and "
                         f"rhs_dilation need one entry per spatial axis ({k}).")
    if isinstance(padding, str) and any(d != 1 for d in ldil):
        raise ValueError("lax.conv_general_dilated: string padding with lhs_dilation is not "
                         "defined; give (low, high) pairs, or use lax.conv_transpose.")
    fgc, bgc = int(feature_group_count), int(batch_group_count)
    _check_groups(n, c, o, i, fgc, bgc)
    eff = _dilated(ks, rdil)
    pads = _spatial_pads(tuple(sp), eff, strides, padding)
    x = pad(x, 0, [(0, 0, 0)] + [(lo, hi, d - 1) for (lo, hi), d in zip(pads, ldil)]
            + [(0, 0, 0)])
    out = tuple(0 if p < e else (p - e) // s + 1
                for p, e, s in zip(aval_of(x).shape[1:-1], eff, strides))
    y = _contract(_im2col(x, ks, rdil, strides, out), w, fgc, bgc)
    y = fnp.reshape(y, (aval_of(y).shape[0],) + out + (o,))
    # axis a of the result holds canonical axis j (out_spec[j] == a), which sits in y at
    # 0 (batch), k + 1 (features) or j - 1 (spatial)
    where = [0, k + 1] + list(range(1, k + 1))
    return fnp.transpose(y, tuple(where[j] for j in np.argsort(dn.out_spec)))


def _im2col(x, ks, rdil, strides, out):
    """(n, positions, taps, c): for each output position the input entries its kernel taps
    read (the taps joined along the channels: contiguous blocks, the fastest copy)."""
    n, c = aval_of(x).shape[0], aval_of(x).shape[-1]
    taps = []
    for offset in itertools.product(*(range(kk) for kk in ks)):
        index = (slice(None),) + tuple(
            slice(t * r, t * r + (m - 1) * s + 1, s) if m else slice(0, 0)
            for t, r, s, m in zip(offset, rdil, strides, out)) + (slice(None),)
        taps.append(x[index])
    pos = int(np.prod(out, dtype=np.int64))
    if not taps:
        return fnp.zeros_like(x, shape=(n, pos, 0, c))
    return fnp.reshape(fnp.concatenate(taps, axis=-1), (n, pos, len(taps), c))


def _contract(cols, w, fgc, bgc):
    """(n', positions, o): the im2col blocks times the kernel, one matmul per group (a single
    (n * positions, taps * c) @ (taps * c, o) product, BLAS's best case, without groups)."""
    n, pos, taps, c = aval_of(cols).shape
    o, i = aval_of(w).shape[:2]
    kern = fnp.swapaxes(fnp.reshape(w, (o, i, taps)), 1, 2)  # (o, taps, i): as cols
    if bgc > 1:  # batch group g pairs lhs rows g * n/B ... with outputs g * o/B ...
        cols = fnp.reshape(cols, (bgc, (n // bgc) * pos, taps * c))
        kern = fnp.swapaxes(fnp.reshape(kern, (bgc, o // bgc, taps * i)), 1, 2)
        y = fnp.reshape(fnp.matmul(cols, kern), (bgc, n // bgc, pos, o // bgc))
        return fnp.reshape(fnp.transpose(y, (1, 2, 0, 3)), (n // bgc, pos, o))
    if fgc == 1:
        y = fnp.matmul(fnp.reshape(cols, (n * pos, taps * c)),
                       fnp.transpose(fnp.reshape(kern, (o, taps * i))))
        return fnp.reshape(y, (n, pos, o))
    cols = fnp.reshape(fnp.transpose(fnp.reshape(cols, (n * pos, taps, fgc, i)), (2, 0, 1, 3)),
                       (fgc, n * pos, taps * i))
    kern = fnp.swapaxes(fnp.reshape(kern, (fgc, o // fgc, taps * i)), 1, 2)
    y = fnp.transpose(fnp.matmul(cols, kern), (1, 0, 2))  # (n * positions, groups, o / groups)
    return fnp.reshape(y, (n, pos, o))


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """`conv_general_dilated` with NCHW input, OIHW kernel and no dilation
    (`jax.lax.conv`)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """`conv_general_dilated` with NCHW input and OIHW kernel
    (`jax.lax.conv_with_general_padding`)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_pads(k, s, padding):
    """The (low, high) pads of the dilated convolution that transposes a forward one."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        lo, hi = (k - p - 1 for p in padding)
        total, low = lo + hi, lo
    return low, total - low


_TRANSPOSE_DEFAULTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                       4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
    """The transposed ("deconvolution") convolution (`jax.lax.conv_transpose`), with
    Keras' Conv2DTranspose output shapes: `conv_general_dilated` of `lhs` dilated by
    `strides`. 'SAME'/'VALID' (and, with `use_consistent_padding`, `(low, high)` pairs)
    name the padding of the forward convolution; otherwise pairs pad the dilated input.
    Default layout NHWC / HWIO; `transpose_kernel=True` flips the kernel's spatial axes
    and swaps its I and O (the exact transpose of a forward convolution's kernel).

    Example:
      conv_transpose(x, w, (2, 2), "SAME")  # NHWC: spatial size doubles
    """
    nd = aval_of(lhs).ndim
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_DEFAULTS:
            raise ValueError(f"lax.conv_transpose: no default dimension_numbers for {nd}-d "
                             "operands; pass them.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[nd]
    dn = conv_dimension_numbers(aval_of(lhs).shape, aval_of(rhs).shape, dimension_numbers)
    ks = [aval_of(rhs).shape[a] for a in dn.rhs_spec[2:]]
    rdil = (1,) * len(ks) if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        each = [padding] * len(ks) if isinstance(padding, str) else list(padding)
        pads = [_transpose_pads(e, int(s), p)
                for e, s, p in zip(_dilated(ks, rdil), strides, each)]
    else:
        pads = padding
    w = fnp.asarray(rhs)
    if transpose_kernel:
        w = fnp.swapaxes(fnp.flip(w, tuple(dn.rhs_spec[2:])), dn.rhs_spec[0], dn.rhs_spec[1])
    return conv_general_dilated(lhs, w, (1,) * len(ks), pads, tuple(strides), rdil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ----------------------------------------------------------------------------- shape helpers

def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The NCHW output shape of a convolution with explicit pads
    (`jax.lax.conv_shape_tuple`)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    padded = [n + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    spatial = tuple(max(0, (p - k) // s + 1) if p >= k else 0
                    for p, k, s in zip(padded, rhs_shape[2:], strides))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_general_dilated` without dilation, in the layout of
    `dimension_numbers` (`jax.lax.conv_general_shape_tuple`)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(np.take(lhs_shape, dn.lhs_spec))
    rhs = tuple(np.take(rhs_shape, dn.rhs_spec))
    out = conv_shape_tuple(lhs, rhs, window_strides, padding)
    return tuple(int(v) for v in np.take(out, np.argsort(dn.out_spec)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of `conv_transpose` (`jax.lax.conv_transpose_shape_tuple`)."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(np.take(lhs_shape, dn.lhs_spec))
    rhs = tuple(np.take(rhs_shape, dn.rhs_spec))
    if isinstance(padding, str):
        padding = [_transpose_pads(k, s, padding) for k, s in zip(rhs[2:], window_strides)]
    spatial = tuple(int((n - 1) * s + lo + hi - k + 2)
                    for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, padding))
    out = (lhs[0], rhs[0]) + spatial
    return tuple(int(v) for v in np.take(out, np.argsort(dn.out_spec)))
