"""Stride-1 convolution as three linear primitives that never hold the whole column matrix.

`conv_s1(x, w, b, geom)` is the forward correlation plus an optional bias `b (O,)` (added in
cache, chunk by chunk), `conv_s1_dx(g, w, x_shape, geom)` its
transpose in `x` and `conv_s1_dw(g, x, w_shape, geom)` its transpose in `w`; each one's VJPs
are the other two (as JAX's convolution transpose rules), so any derivative order works.
`geom = ((kh, kw), (ph, pw), (dh, dw))`; `w` is `(O, C*kh*kw)` (one group).

Windows are taken from the padded input flattened per channel: output pixel (i, j) and
kernel offset (a, b) read flat position `i*Wp + j + (a*dh*Wp + b*dw)`. Computing the output on
an `(H_out, Wp)` grid (its last `Wp - W_out` columns are junk and cropped) makes every offset
one contiguous run of `H_out * Wp` values, so the column copy and its transpose (one contiguous
add per offset) run at memory speed. The batch is processed a few images at a time so the
columns of a chunk stay in cache between the copy and the GEMM (or the GEMM and the add).
"""

import fnad.numpy as fnp
from fnad._backend import array_module
from fnad.extend import defjvp, defjvp_linear, defvjp, primitive

from ._util import shape_of

__all__ = ["conv_s1", "conv_s1_dx", "conv_s1_dw"]

_CHUNK_BYTES = 1 << 20  # column-matrix bytes per chunk of images


def _dims(x_shape, geom):
    (kh, kw), (ph, pw), (dh, dw) = geom
    n, c, h, w = x_shape
    hp, wp = h + 2 * ph, w + 2 * pw
    ho, wo = hp - dh * (kh - 1), wp - dw * (kw - 1)
    return hp, wp, ho, wo


def _chunks(n, k, m, itemsize):
    nb = max(1, min(n, _CHUNK_BYTES // max(1, k * m * itemsize)))
    return [(i, min(n, i + nb)) for i in range(0, n, nb)]


def _flat_pad(xp, x, geom):
    """`x (N, C, H, W)` zero-padded and flattened to `(N, C, Hp*Wp + dw*(kw-1))`."""
    (kh, kw), (ph, pw), (dh, dw) = geom
    n, c, h, w = x.shape
    hp, wp, _, _ = _dims(x.shape, geom)
    out = xp.zeros((n, c, hp * wp + dw * (kw - 1)), x.dtype)
    out[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + w] = x
    return out


def _cols(xp, xf, wp, m, geom, buf):
    """Columns `(nb, C*kh*kw, m)` of a chunk `xf (nb, C, L)` of the flat padded input, copied
    into (the first nb images of) `buf`: reusing one buffer spares the page faults of a fresh
    allocation per chunk, which cost more than the copy itself."""
    (kh, kw), _, (dh, dw) = geom
    nb, c, _ = xf.shape
    s0, s1, s2 = xf.strides
    view = xp.lib.stride_tricks.as_strided(
        xf, (nb, c, kh, kw, m), (s0, s1, s2 * dh * wp, s2 * dw, s2))
    out = buf[:nb]
    xp.copyto(out.reshape(view.shape), view)
    return out


def _pad_out(g, buf):
    """`g (nb, O, Ho, Wo)` copied into `buf (nb', O, Ho, Wp)`, whose junk columns stay 0:
    `(nb, O, Ho*Wp)`."""
    nb, o, ho, wo = g.shape
    out = buf[:nb]
    out[..., :wo] = g
    return out.reshape(nb, o, -1)


def _conv_s1_impl(x, w, b, geom):
    xp = array_module(x)
    bias = None if b is None else b.reshape(-1, 1, 1)
    n = x.shape[0]
    hp, wp, ho, wo = _dims(x.shape, geom)
    m = ho * wp
    xf = _flat_pad(xp, x, geom)
    dtype = xp.result_type(x.dtype, w.dtype, *(() if b is None else (b.dtype,)))
    y = xp.empty((n, w.shape[0], ho, wo), dtype)
    chunks = _chunks(n, w.shape[1], m, x.itemsize)
    nb = chunks[0][1]
    cbuf = xp.empty((nb, w.shape[1], m), x.dtype)
    ybuf = xp.empty((nb, w.shape[0], m), xp.result_type(x.dtype, w.dtype))
    for a, b in chunks:
        yc = xp.matmul(w, _cols(xp, xf[a:b], wp, m, geom, cbuf), out=ybuf[:b - a])
        yc = yc.reshape(b - a, -1, ho, wp)[..., :wo]
        if bias is None:
            y[a:b] = yc
        else:
            xp.add(yc, bias, out=y[a:b])
    return y


def _conv_s1_dx_impl(g, w, x_shape, geom):
    xp = array_module(g)
    (kh, kw), (ph, pw), (dh, dw) = geom
    n, c, h, wd = x_shape
    hp, wp, ho, wo = _dims(x_shape, geom)
    m = ho * wp
    dt = xp.result_type(g.dtype, w.dtype)
    out = xp.zeros((n, c, hp * wp + dw * (kw - 1)), dt)
    wt = xp.ascontiguousarray(w.T)
    chunks = _chunks(n, w.shape[1], m, dt.itemsize)
    nb = chunks[0][1]
    gbuf = xp.zeros((nb, w.shape[0], ho, wp), g.dtype)
    cbuf = xp.empty((nb, w.shape[1], m), dt)
    for a, b in chunks:
        cols = xp.matmul(wt, _pad_out(g[a:b], gbuf), out=cbuf[:b - a])
        cols = cols.reshape(b - a, c, kh, kw, m)
        oc = out[a:b]
        for i in range(kh):
            for j in range(kw):
                o = i * dh * wp + j * dw
                oc[:, :, o:o + m] += cols[:, :, i, j]
    return out[:, :, :hp * wp].reshape(n, c, hp, wp)[:, :, ph:ph + h, pw:pw + wd]


def _conv_s1_dw_impl(g, x, w_shape, geom):
    xp = array_module(g)
    n = x.shape[0]
    hp, wp, ho, wo = _dims(x.shape, geom)
    m = ho * wp
    xf = _flat_pad(xp, x, geom)
    dt = xp.result_type(g.dtype, x.dtype)
    dw = xp.zeros(w_shape, dt)
    chunks = _chunks(n, w_shape[1], m, x.itemsize)
    nb = chunks[0][1]
    gbuf = xp.zeros((nb, w_shape[0], ho, wp), g.dtype)
    cbuf = xp.empty((nb, w_shape[1], m), x.dtype)
    pbuf = xp.empty((nb,) + tuple(w_shape), dt)
    for a, b in chunks:
        cols = _cols(xp, xf[a:b], wp, m, geom, cbuf)
        p = xp.matmul(_pad_out(g[a:b], gbuf), cols.transpose(0, 2, 1), out=pbuf[:b - a])
        dw += p.sum(0)
    return dw


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
