"""Stride-1 convolution as three linear primitives that never hold the whole column matrix.

`conv_s1(x, w, b, geom)` is the forward correlation plus an optional bias `b (O,)` (added in
cache, chunk by chunk), `conv_s1_dx(g, w, x_shape, geom)` its
transpose in `x` and `conv_s1_dw(g, x, w_shape, geom)` its transpose in `w`; each one's VJPs
are the other two (as JAX's convolution transpose rules), so any derivative order works.
`geom = ((kh, kw), (ph, pw), (dh, dw))`; `w` is `(O, C*kh*kw)` (one group).

Each image is zero-padded and flattened to one run: channel c occupies `[c*L, (c+1)*L)` with
`L = Hp*Wp + dw*(kw-1)`, plus a tail of `o_max` zeros. Output pixel (i, j) of channel c and
kernel offset (a, b) then read position `c*L + i*Wp + j + o_ab`, `o_ab = a*dh*Wp + b*dw`. We
compute the output on an `(L,)` grid per output channel (the first `H_out * Wp` entries hold
the `(H_out, Wp)` grid whose last `Wp - W_out` columns are junk; the rest is junk too), so the
columns of offset (a, b) for all channels are the one contiguous slice `[o_ab, o_ab + C*L)`:
the column copy and its transpose (the input gradient's scatter-add) are kh*kw long 1-D copies
or adds per image. Junk entries of an output gradient are zero, so they add nothing. The rows
of the column matrix are ordered (a, b, c), so the weight is permuted once per call. The batch
runs a few images at a time, so a chunk's columns stay in cache between the copy and the GEMM
(or the GEMM and the add).
"""

import numpy as np

import fnad.numpy as fnp
from fnad.extend import (ShapedArray, array_module, defabstract_eval, defbatch, defjvp,
                         defjvp_linear, defvjp, image_batch, primitive)
from fnad.kernels.cpu import parallel_map, scratch

from ._util import shape_of

__all__ = ["conv_s1", "conv_s1_dx", "conv_s1_dw"]

_CHUNK_BYTES = 1 << 20  # column-matrix bytes per chunk of images


def _dims(x_shape, geom):
    """(hp, wp, ho, wo, L, offsets) of the flat layout (see the module docstring)."""
    (kh, kw), (ph, pw), (dh, dw) = geom
    n, c, h, w = x_shape
    hp, wp = h + 2 * ph, w + 2 * pw
    ho, wo = hp - dh * (kh - 1), wp - dw * (kw - 1)
    offsets = [i * dh * wp + j * dw for i in range(kh) for j in range(kw)]
    ln = -(-(hp * wp + dw * (kw - 1)) // 16) * 16  # rows of whole 64-byte lines: faster GEMMs
    return hp, wp, ho, wo, ln, offsets


def _chunks(n, k, m, itemsize):
    nb = max(1, min(n, _CHUNK_BYTES // max(1, k * m * itemsize)))
    return [(i, min(n, i + nb)) for i in range(0, n, nb)]


def _buf(xp, name, shape, dtype, zero=False):
    """Per-thread reusable scratch for NumPy, a fresh array otherwise."""
    if xp is np:
        return scratch(name, shape, dtype, zero)
    return (xp.zeros if zero else xp.empty)(shape, dtype)


def _map(xp, fn, chunks, blas=True):
    """`fn(a, b)` over the chunks, on fnad's thread pool for NumPy arrays."""
    return parallel_map(lambda ab, slot: fn(*ab), chunks, blas=blas,
                        threads=None if xp is np else 1)


def _flat_pad(xp, x, geom, nb):
    """Images `x (nb', C, H, W)` (nb' <= nb) zero-padded and flattened per image into a
    reused buffer: `(nb', C*L + o_max)`. Its padding is never written, so it stays 0."""
    (kh, kw), (ph, pw), _ = geom
    n, c, h, w = x.shape
    hp, wp, _, _, ln, offs = _dims(x.shape, geom)
    out = _buf(xp, ("xf", geom, h, w), (nb, c * ln + offs[-1]), x.dtype, zero=True)[:n]
    grid = out[:, :c * ln].reshape(n, c, ln)[:, :, :hp * wp].reshape(n, c, hp, wp)
    grid[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _cols(xf, c, ln, offs, buf):
    """Columns `(nb, kh*kw*C, L)` (rows ordered (a, b, c)) of a chunk `xf (nb, C*L + o_max)`,
    copied into (the first nb images of) `buf`."""
    nb = xf.shape[0]
    out = buf[:nb]
    blocks = out.reshape(nb, len(offs), c * ln)
    for t, o in enumerate(offs):
        blocks[:, t] = xf[:, o:o + c * ln]
    return out


def _pad_out(g, buf, wp):
    """`g (nb, O, Ho, Wo)` copied onto the flat grid `buf (nb', O, L)`, whose other entries
    stay 0: `(nb, O, L)`."""
    nb, o, ho, wo = g.shape
    out = buf[:nb]
    out[:, :, :ho * wp].reshape(nb, o, ho, wp)[..., :wo] = g
    return out


def _perm(w, k2):
    """`(O, C*k2)` weights with columns (c, a, b) as `(O, k2*C)` with columns (a, b, c)."""
    o = w.shape[0]
    return w.reshape(o, -1, k2).transpose(0, 2, 1).reshape(o, -1)


# Each impl runs its chunks (a few images each) on both threads: the padding, the column
# copies, the GEMM and the scatter of a chunk stay in that thread's cache and buffers, and
# chunks write disjoint images of the result (the weight gradient sums its chunks' parts in
# chunk order), so the threading does not change a bit.

def _conv_s1_impl(x, w, b, geom):
    xp = array_module(x)
    (kh, kw), _, _ = geom
    n, c = x.shape[:2]
    hp, wp, ho, wo, ln, offs = _dims(x.shape, geom)
    bias = None if b is None else b.reshape(-1, 1, 1)
    wperm = _perm(w, kh * kw)
    dtype = xp.result_type(x.dtype, w.dtype, *(() if b is None else (b.dtype,)))
    y = xp.empty((n, w.shape[0], ho, wo), dtype)
    chunks = _chunks(n, w.shape[1], ln, x.itemsize)
    nb = chunks[0][1]
    m = ho * wp  # GEMMs skip the columns past the (Ho, Wp) grid
    mdt = xp.result_type(x.dtype, w.dtype)

    def run(a, b):
        xf = _flat_pad(xp, x[a:b], geom, nb)
        cols = _cols(xf, c, ln, offs, _buf(xp, "cols", (nb, w.shape[1], ln), x.dtype))
        ybuf = _buf(xp, "y", (nb, w.shape[0], m), mdt)
        yc = xp.matmul(wperm, cols[:, :, :m], out=ybuf[:b - a])
        yc = yc.reshape(b - a, -1, ho, wp)[..., :wo]
        if bias is None:
            y[a:b] = yc
        else:
            xp.add(yc, bias, out=y[a:b])

    _map(xp, run, chunks)
    return y


def _conv_s1_dx_impl(g, w, x_shape, geom):
    xp = array_module(g)
    (kh, kw), (ph, pw), _ = geom
    n, c, h, wd = x_shape
    hp, wp, ho, wo, ln, offs = _dims(x_shape, geom)
    dt = xp.result_type(g.dtype, w.dtype)
    out = xp.empty((n, c * ln + offs[-1]), dt)
    wt = xp.ascontiguousarray(_perm(w, kh * kw).T)
    chunks = _chunks(n, w.shape[1], ln, dt.itemsize)
    nb = chunks[0][1]
    m = ho * wp  # GEMMs skip the columns past the (Ho, Wp) grid: they stay 0 in cbuf

    def run(a, b):
        gbuf = _buf(xp, ("g", geom, ho, wo), (nb, w.shape[0], ln), g.dtype, zero=True)
        cbuf = _buf(xp, ("dcols", m), (nb, w.shape[1], ln), dt, zero=True)
        xp.matmul(wt, _pad_out(g[a:b], gbuf, wp)[:, :, :m], out=cbuf[:b - a, :, :m])
        blocks = cbuf[:b - a].reshape(b - a, len(offs), c * ln)
        oc = out[a:b]
        oc[:] = 0
        for t, o in enumerate(offs):
            oc[:, o:o + c * ln] += blocks[:, t]

    _map(xp, run, chunks)
    grid = out[:, :c * ln].reshape(n, c, ln)[:, :, :hp * wp].reshape(n, c, hp, wp)
    return grid[:, :, ph:ph + h, pw:pw + wd]


def _conv_s1_dw_impl(g, x, w_shape, geom):
    xp = array_module(g)
    (kh, kw), _, _ = geom
    n, c = x.shape[:2]
    hp, wp, ho, wo, ln, offs = _dims(x.shape, geom)
    dt = xp.result_type(g.dtype, x.dtype)
    o, k = w_shape
    chunks = _chunks(n, w_shape[1], ln, x.itemsize)
    nb = chunks[0][1]
    m = ho * wp  # GEMMs skip the columns past the (Ho, Wp) grid

    def run(a, b):
        xf = _flat_pad(xp, x[a:b], geom, nb)
        cols = _cols(xf, c, ln, offs, _buf(xp, "cols", (nb, k, ln), x.dtype))[:, :, :m]
        gc = _pad_out(g[a:b], _buf(xp, ("g", geom, ho, wo), (nb, o, ln), g.dtype, zero=True),
                      wp)[:, :, :m]
        # (k, m) @ (m, O): this orientation of the long-K product is the faster one
        p = xp.matmul(cols, gc.transpose(0, 2, 1), out=_buf(xp, "dw", (nb, k, o), dt)[:b - a])
        return p.sum(0)

    dwt = xp.zeros((k, o), dt)  # the transpose, rows (a, b, c), until the end
    for part in _map(xp, run, chunks):  # summed in chunk order
        dwt += part
    return xp.ascontiguousarray(dwt.reshape(kh * kw, -1, o).transpose(2, 1, 0)).reshape(w_shape)


conv_s1 = primitive(_conv_s1_impl, "conv_s1")
conv_s1_dx = primitive(_conv_s1_dx_impl, "conv_s1_dx")
conv_s1_dw = primitive(_conv_s1_dw_impl, "conv_s1_dw")


defvjp(conv_s1,
       lambda g, ans, x, w, b, geom: conv_s1_dx(g, w, shape_of(x), geom),
       lambda g, ans, x, w, b, geom: conv_s1_dw(g, x, shape_of(w), geom),
       lambda g, ans, x, w, b, geom: fnp.sum(g, axis=(0, 2, 3)))
defjvp(conv_s1,
       lambda t, ans, x, w, b, geom: conv_s1(t, w, None, geom),
       lambda t, ans, x, w, b, geom: conv_s1(x, t, None, geom),
       lambda t, ans, x, w, b, geom: fnp.broadcast_to(fnp.reshape(t, (-1, 1, 1)),
                                                      shape_of(ans)))
defvjp(conv_s1_dx,
       lambda ct, ans, g, w, xs, geom: conv_s1(ct, w, None, geom),
       lambda ct, ans, g, w, xs, geom: conv_s1_dw(g, ct, shape_of(w), geom))
defvjp(conv_s1_dw,
       lambda ct, ans, g, x, ws, geom: conv_s1(x, ct, None, geom),
       lambda ct, ans, g, x, ws, geom: conv_s1_dx(g, ct, shape_of(x), geom))
defjvp_linear(conv_s1_dx, argnums=(0, 1))
defjvp_linear(conv_s1_dw, argnums=(0, 1))
defbatch(conv_s1, image_batch(conv_s1))  # the batch folds into the images' N
defbatch(conv_s1_dx, image_batch(conv_s1_dx, shape_arg=2))
# conv_s1_dw has none: with a batched input each example has its own weight gradient, so
# vmap runs it per example.


# ----------------------------------------------------------------------------- abstract evaluation


def _conv_s1_aval(x, w, b, geom):
    _, _, ho, wo, _, _ = _dims(x.shape, geom)
    dtype = np.result_type(x.dtype, w.dtype, *(() if b is None else (b.dtype,)))
    return ShapedArray((x.shape[0], w.shape[0], ho, wo), dtype, xp=x.xp)


defabstract_eval(conv_s1, _conv_s1_aval)
defabstract_eval(conv_s1_dx, lambda g, w, x_shape, geom: ShapedArray(
    x_shape, np.result_type(g.dtype, w.dtype), xp=g.xp))
defabstract_eval(conv_s1_dw, lambda g, x, w_shape, geom: ShapedArray(
    w_shape, np.result_type(g.dtype, x.dtype), xp=g.xp))
