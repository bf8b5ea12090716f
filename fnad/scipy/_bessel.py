"""Bessel functions as primitives: j0 j1 jn y0 y1 yn i0 i0e i1 i1e iv ive.

Derivatives in x come from the recurrences (each rule calls these primitives again, so every
order works):
  J_n' = (J_{n-1} - J_{n+1}) / 2,  Y_n' likewise,  j0' = -j1,  y0' = -y1,
  I_v' = (I_{v-1} + I_{v+1}) / 2,  ive' = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v.
The order (n or v) carries no derivative: asking for one raises NotImplementedError.
"""

from .. import numpy as fnp
from .._core.rules import defjvp, defvjp
from .._core.abstract import elementwise_rule
from .._batching.families import elementwise_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch
from ..numpy._util import shape, unbroadcast, wrap
from . import _bessel_kernels as _b
from ._special import _bcast, _def_unary, _kernel

j0 = wrap(_kernel("j0", _b.j0), "j0")
j1 = wrap(_kernel("j1", _b.j1), "j1")
y0 = wrap(_kernel("y0", _b.y0), "y0")
y1 = wrap(_kernel("y1", _b.y1), "y1")
jn = wrap(_kernel("jn", _b.jn), "jn")
yn = wrap(_kernel("yn", _b.yn), "yn")
iv = wrap(_kernel("iv", _b.iv), "iv")
ive = wrap(_kernel("ive", _b.ive), "ive")
i0 = wrap(_kernel("i0", _b.i0), "i0")
i1 = wrap(_kernel("i1", _b.i1), "i1")
i0e = wrap(_kernel("i0e", _b.i0e), "i0e")
i1e = wrap(_kernel("i1e", _b.i1e), "i1e")


def _order_rule(fname, argname):
    def rule(*args, **kw):
        raise NotImplementedError(
            f"fnad.scipy.special.{fname}: the derivative in the order `{argname}` (argument 0) "
            "is not implemented; differentiate in x only, passing the order as a constant.")
    return rule


_def_unary(j0, lambda ans, x: -j1(x))
_def_unary(j1, lambda ans, x: 0.5 * (j0(x) - jn(2, x)))
_def_unary(y0, lambda ans, x: -y1(x))
_def_unary(y1, lambda ans, x: 0.5 * (y0(x) - yn(2, x)))
_def_unary(i0, lambda ans, x: i1(x))
_def_unary(i1, lambda ans, x: 0.5 * (i0(x) + iv(2.0, x)))
_def_unary(i0e, lambda ans, x: i1e(x) - fnp.sign(x) * ans)
_def_unary(i1e, lambda ans, x: 0.5 * (i0e(x) + ive(2.0, x)) - fnp.sign(x) * ans)

_D_ORDER = {
    jn: lambda ans, n, x: 0.5 * (jn(n - 1, x) - jn(n + 1, x)),
    yn: lambda ans, n, x: 0.5 * (yn(n - 1, x) - yn(n + 1, x)),
    iv: lambda ans, v, x: 0.5 * (iv(v - 1, x) + iv(v + 1, x)),
    ive: lambda ans, v, x: 0.5 * (ive(v - 1, x) + ive(v + 1, x)) - fnp.sign(x) * ans,
}
for _f, _d in _D_ORDER.items():
    _arg = "n" if _f in (jn, yn) else "v"
    defvjp(_f, _order_rule(_f.__name__, _arg),
           lambda g, ans, n, x, _d=_d: unbroadcast(g * _d(ans, n, x), shape(x)))
    defjvp(_f, _order_rule(_f.__name__, _arg),
           lambda t, ans, n, x, _d=_d: _bcast(t * _d(ans, n, x), ans))
del _f, _d, _arg

_DOCS = {
    j0: "The Bessel function of the first kind of order 0.",
    j1: "The Bessel function of the first kind of order 1.",
    jn: "jn(n, x): the Bessel function of the first kind of integer order n.",
    y0: "The Bessel function of the second kind of order 0 (-inf at 0, NaN below).",
    y1: "The Bessel function of the second kind of order 1 (-inf at 0, NaN below).",
    yn: "yn(n, x): the Bessel function of the second kind of integer order n.",
    i0: "The modified Bessel function of the first kind of order 0.",
    i1: "The modified Bessel function of the first kind of order 1.",
    i0e: "The exponentially scaled modified Bessel function i0(x) exp(-|x|).",
    i1e: "The exponentially scaled modified Bessel function i1(x) exp(-|x|).",
    iv: "iv(v, x): the modified Bessel function of the first kind of real order v.",
    ive: "ive(v, x): the exponentially scaled iv(v, x) exp(-|x|).",
}
for _f, _doc in _DOCS.items():
    _order = "2, " if _f in _D_ORDER else ""
    _f.__doc__ = (f"{_doc}\n\nDifferentiable in x (VJP and JVP, any order; not in the order); "
                  "runs the NumPy kernel or cupyx.scipy.special directly on plain arrays.\n\n"
                  f"Example:\n  fnad.grad(lambda x: fnp.sum(fnad.scipy.special.{_f.__name__}("
                  f"{_order}x)))(x)\n")
del _f, _doc, _order

# ----------------------------------------------------------------------------- abstract evaluation

for _f in (j0, j1, y0, y1, jn, yn, iv, ive, i0, i1, i0e, i1e):
    defabstract_eval(_f, elementwise_rule(as_primitive(_f).impl))
    defbatch(_f, elementwise_batch(_f))
del _f
