"""The op table: every differentiable fnad.numpy function with points in its domain.

Case format (followed by tests/numpy/cases_linalg.py too; tools/gradcheck_report.py reads
the `CASES` list of each table):

  from tests.numpy.casekit import OpCase
  OpCase(name, variant, fun, args, torch_fun=None, order=2, modes=("fwd", "rev"),
         atol=None, rtol=None, eps=None)

  name       the public name, one report row per name ("sum", "linalg.inv", "getitem").
  variant    a short id of this case among the name's cases ("(2,3) axis=-1 keepdims").
  fun        a function of the positional float64 arrays in `args`, written with
             fnad.numpy, returning an array or a tuple/list of arrays. Non-float
             parameters (axes, index arrays) are closed over, not passed.
  args       a tuple of float64 NumPy arrays inside the op's domain (away from kinks and
             branch cuts, so finite differences are meaningful).
  torch_fun  the same computation written with torch on float64 tensors, or None where
             torch has no counterpart; forward values and VJPs are compared with it.
  order      highest derivative order handed to fnad.test_util.check_grads.
  modes, atol, rtol, eps
             passed to check_grads (defaults: both modes, float64 tolerances).

`casekit` also has SHAPES, PAIRS, DOMAINS, sample(), make_args(), tensors(), tdims().
"""

import numpy as np

import fnad.numpy as fnp
from tests.numpy.casekit import (PAIRS, SHAPES, OpCase, make_args, sample, rng_for, shape_id,
                                 tdims, torch)

# ----------------------------------------------------------------------------- helpers


def unary(name, domain="real", tfun=None, shapes=SHAPES, order=2, fun=None):
    """Cases of a unary function over `shapes`; `tfun` None means torch.<name>, False none."""
    f = fun or getattr(fnp, name)
    if tfun is None:
        tfun = lambda t, _n=name: getattr(torch, _n)(t)
    return [OpCase(name, shape_id((s,)), f, make_args(name, s, (domain,), (s,)),
                   tfun or None, order) for s in shapes]


def binary(name, domains=("real", "real"), tfun=None, pairs=PAIRS, order=2, fun=None):
    f = fun or getattr(fnp, name)
    if tfun is None:
        tfun = lambda a, b, _n=name: getattr(torch, _n)(a, b)
    return [OpCase(name, shape_id(p), f, make_args(name, p, domains, p), tfun or None, order)
            for p in pairs]


def _axes_for(nd):
    out = [(None, False), (None, True)]
    if nd >= 1:
        out += [(0, False), (-1, True)]
    if nd >= 2:
        out += [(-1, False), ((0, -1), False)]
    return out


def reduction(name, tfun, domain="real", fun=None, shapes=SHAPES, axes_for=_axes_for,
              order=2, **kw):
    """Cases over shapes x (axis, keepdims); `tfun(t, axis, keepdims)` is the torch form."""
    cases = []
    for s in shapes:
        for axis, kd in axes_for(len(s)):
            variant = f"{shape_id((s,))} axis={axis}" + (" keepdims" if kd else "")
            f = (fun or getattr(fnp, name))
            cases.append(OpCase(
                name, variant,
                lambda x, _f=f, _a=axis, _k=kd: _f(x, axis=_a, keepdims=_k, **kw),
                make_args(name, variant, (domain,), (s,)),
                None if tfun is None else (lambda t, _a=axis, _k=kd: tfun(t, _a, _k)),
                order))
    return cases


def _tprod(t, axis, kd):
    for d in sorted((x % max(t.ndim, 1) for x in tdims(axis, t.ndim)), reverse=True):
        t = torch.prod(t, dim=d, keepdim=True)
    if not kd:
        t = t.reshape([n for i, n in enumerate(t.shape)
                       if i not in {x % max(t.ndim, 1) for x in tdims(axis, t.ndim)}])
    return t


def _tred(fn, **kw):
    return lambda t, axis, kd: fn(t, dim=tdims(axis, t.ndim), keepdim=kd, **kw)


# ----------------------------------------------------------------------------- elementwise

ELEMENTWISE = (
    unary("negative", tfun=lambda t: torch.neg(t))
    + unary("positive")
    + unary("square")
    + unary("sqrt", "pos")
    + unary("cbrt", "pos", tfun=lambda t: t ** (1.0 / 3.0))
    + unary("abs", "nonzero")
    + unary("absolute", "nonzero", tfun=lambda t: torch.abs(t))
    + unary("fabs", "nonzero", tfun=lambda t: torch.abs(t))
    + unary("exp", order=3)
    + unary("exp2")
    + unary("expm1")
    + unary("log", "pos", order=3)
    + unary("log2", "pos")
    + unary("log10", "pos")
    + unary("log1p", "pos")
    + unary("sin", order=3)
    + unary("cos")
    + unary("tan", "unit")
    + unary("arcsin", "unit")
    + unary("arccos", "unit")
    + unary("arctan")
    + unary("sinh")
    + unary("cosh")
    + unary("tanh", order=3)
    + unary("arcsinh")
    + unary("arccosh", "gt1")
    + unary("arctanh", "unit")
    + unary("reciprocal", "nonzero")
    + unary("deg2rad")
    + unary("rad2deg")
    + unary("radians", tfun=lambda t: torch.deg2rad(t))
    + unary("degrees", tfun=lambda t: torch.rad2deg(t))
    + unary("sinc")
    + unary("real")
    + unary("conj", tfun=lambda t: torch.conj(t))
    + unary("imag", tfun=lambda t: t * 0.0)
    + unary("angle")
    + binary("add")
    + binary("subtract")
    + binary("multiply")
    + binary("divide", ("real", "nonzero"))
    + binary("true_divide", ("real", "nonzero"))
    + binary("power", ("pos", "real"), tfun=lambda a, b: torch.pow(a, b))
    + binary("arctan2", ("nonzero", "nonzero"))
    + binary("hypot", ("nonzero", "nonzero"))
    + binary("logaddexp")
    + binary("logaddexp2")
    + binary("maximum")
    + binary("minimum")
    + binary("fmax")
    + binary("fmin")
    + binary("mod", ("int", "pos"), tfun=lambda a, b: torch.remainder(a, b),
             fun=lambda a, b: fnp.mod(a, b + 3.0))
    + binary("remainder", ("int", "pos"), tfun=lambda a, b: torch.remainder(a, b),
             fun=lambda a, b: fnp.remainder(a, b + 3.0))
    + binary("fmod", ("int", "pos"), tfun=lambda a, b: torch.fmod(a, b),
             fun=lambda a, b: fnp.fmod(a, b + 3.0))
    + binary("copysign", ("nonzero", "nonzero"))
)
# mod/fmod: a in {0.5, 1.5, 2.5} and b + 3 in (3.5, 5) keep a / b away from integers.
for _c in ELEMENTWISE:
    if _c.name in ("mod", "remainder", "fmod"):
        _t = _c.torch_fun
        _c.torch_fun = lambda a, b, _t=_t: _t(a, b + 3.0)
del _c

ELEMENTWISE += [
    OpCase("clip", shape_id((s,)), lambda x: fnp.clip(x, -0.5, 0.5),
           (np.where(np.abs(a) < 0.52, a * 0.9, a),), lambda t: torch.clamp(t, -0.5, 0.5))
    for s in SHAPES for a in make_args("clip", s, ("real",), (s,))
]
ELEMENTWISE += [
    OpCase("clip", "array bounds " + shape_id(p), lambda x, lo: fnp.clip(x, lo, 1.0),
           (sample("real", p[0], rng_for("clipa", p)) + 3 * (np.arange(np.prod(p[0], dtype=int))
                                                              .reshape(p[0]) % 2 - 0.5),
            sample("real", p[1], rng_for("clipb", p)) * 0.2 - 0.2),
           lambda t, lo: torch.clamp(t, lo, torch.tensor(1.0, dtype=torch.float64)))
    for p in [((2, 3), (3,)), ((2, 1, 3), (1, 4, 1))]
]
ELEMENTWISE += [
    OpCase("where", shape_id(p), lambda x, y: fnp.where(x > 0, x, y), make_args("where", p,
           ("nonzero", "real"), p), lambda x, y: torch.where(x > 0, x, y))
    for p in PAIRS
]

# ----------------------------------------------------------------------------- reductions

REDUCTIONS = (
    reduction("sum", _tred(torch.sum) if torch else None)
    + reduction("mean", _tred(torch.mean) if torch else None)
    + reduction("prod", _tprod)
    + reduction("max", _tred(torch.amax) if torch else None)
    + reduction("min", _tred(torch.amin) if torch else None)
    + reduction("amax", _tred(torch.amax) if torch else None)
    + reduction("amin", _tred(torch.amin) if torch else None)
    + reduction("ptp", lambda t, a, k: torch.amax(t, dim=tdims(a, t.ndim), keepdim=k)
                - torch.amin(t, dim=tdims(a, t.ndim), keepdim=k))
    + reduction("nansum", _tred(torch.nansum) if torch else None)
    + reduction("nanmean", _tred(torch.nanmean) if torch else None)
    + reduction("nanmax", _tred(torch.amax) if torch else None)
    + reduction("nanmin", _tred(torch.amin) if torch else None)
    + reduction("var", _tred(torch.var, correction=0) if torch else None,
                shapes=[(3,), (2, 3), (2, 1, 3)])
    + reduction("var", _tred(torch.var, correction=1) if torch else None,
                shapes=[(4,), (2, 3)], ddof=1)
    + reduction("std", _tred(torch.std, correction=0) if torch else None,
                shapes=[(3,), (2, 3), (2, 1, 3)])
    + reduction("std", _tred(torch.std, correction=1) if torch else None,
                shapes=[(4,), (2, 3)], ddof=1)
    + reduction("nanvar", _tred(torch.var, correction=0) if torch else None,
                shapes=[(3,), (2, 3)])
    + reduction("nanstd", _tred(torch.std, correction=0) if torch else None,
                shapes=[(3,), (2, 3)])
)
_ZEROS = np.array([[1.5, 0.0, -2.0], [0.0, 0.0, 0.7]])
REDUCTIONS += [
    OpCase("prod", "zeros axis=" + str(ax), lambda x, _a=ax: fnp.prod(x, axis=_a), (_ZEROS,),
           lambda t, _a=ax: torch.prod(t, dim=_a) if _a is not None else torch.prod(t))
    for ax in (None, 0, 1)
]


def _cum_axes(nd):
    return [None] + list(range(-nd, nd))


for _name in ("cumsum", "cumprod"):
    for _s in SHAPES:
        for _ax in _cum_axes(len(_s)):
            _v = f"{shape_id((_s,))} axis={_ax}"
            REDUCTIONS.append(OpCase(
                _name, _v, lambda x, _n=_name, _a=_ax: getattr(fnp, _n)(x, axis=_a),
                make_args(_name, _v, ("real",), (_s,)),
                lambda t, _n=_name, _a=_ax: getattr(torch, _n)(
                    t.reshape(-1) if _a is None else t, dim=0 if _a is None else _a)))
    REDUCTIONS.append(OpCase(
        _name, "zeros axis=1", lambda x, _n=_name: getattr(fnp, _n)(x, axis=1), (_ZEROS,),
        lambda t, _n=_name: getattr(torch, _n)(t, dim=1)))
REDUCTIONS += [
    OpCase("cumulative_sum", "(2,3) axis=1 include_initial",
           lambda x: fnp.cumulative_sum(x, axis=1, include_initial=True),
           make_args("cumulative_sum", 0, ("real",), ((2, 3),)),
           lambda t: torch.cat([torch.zeros(2, 1, dtype=t.dtype), torch.cumsum(t, 1)], 1)),
    OpCase("cumulative_prod", "(2,3) axis=0", lambda x: fnp.cumulative_prod(x, axis=0),
           make_args("cumulative_prod", 0, ("real",), ((2, 3),)),
           lambda t: torch.cumprod(t, 0)),
    OpCase("average", "(2,3) axis=None", lambda x: fnp.average(x),
           make_args("average", 0, ("real",), ((2, 3),)), lambda t: torch.mean(t)),
    OpCase("average", "(2,3) weights (2,3)", lambda x, w: fnp.average(x, weights=w),
           make_args("average", 1, ("real", "pos"), ((2, 3), (2, 3))),
           lambda t, w: torch.sum(t * w) / torch.sum(w)),
    OpCase("average", "(2,1,3) axis=-1 weights (3,)",
           lambda x, w: fnp.average(x, axis=-1, weights=w),
           make_args("average", 2, ("real", "pos"), ((2, 1, 3), (3,))),
           lambda t, w: torch.sum(t * w, -1) / torch.sum(w)),
    OpCase("average", "(2,3) axis=0 weights keepdims",
           lambda x, w: fnp.average(x, axis=0, weights=w, keepdims=True),
           make_args("average", 3, ("real", "pos"), ((2, 3), (2,))),
           lambda t, w: torch.sum(t * w[:, None], 0, keepdim=True) / torch.sum(w)),
]

from tests.numpy.cases_shape import INDEXING, PRODUCTS, SHAPE  # noqa: E402
from tests.numpy.cases_surface import SURFACE  # noqa: E402

CASES = ELEMENTWISE + REDUCTIONS + SHAPE + PRODUCTS + INDEXING + SURFACE

if hasattr(fnp, "logsumexp"):
    CASES += reduction("logsumexp", _tred(torch.logsumexp) if torch else None,
                       shapes=[(3,), (2, 3), (2, 1, 3)])

from tests.numpy.cases_fft import FFT  # noqa: E402

CASES += FFT
