"""Elementwise primitives and their rules.

Unary rules are given as the derivative `d(ans, x)`; both VJP (`g * d`) and JVP
(`t * d`) follow from it. Binary rules go through the one `unbroadcast` helper.
"""

import math

import numpy as np

from .. import numpy as fnp
from .._core.abstract import ShapedArray, elementwise_rule, xp_of
from .._core.backend import array_module
from .._core.tracer import Tracer, getval
from .._batching.families import elementwise_batch
from .._core.rules import as_primitive, defabstract_eval, defbatch, defjvp, defvjp
from ._util import dtype_of, shape, unbroadcast, wrap, wrap_nondiff

# ----------------------------------------------------------------------------- primitives

add = wrap(np.add)
subtract = wrap(np.subtract)
multiply = wrap(np.multiply)
divide = wrap(np.divide)
true_divide = divide
negative = wrap(np.negative)
positive = wrap(np.positive)
power = wrap(np.power)
square = wrap(np.square)
sqrt = wrap(np.sqrt)
cbrt = wrap(np.cbrt)
absolute = wrap(np.absolute)
abs = absolute
fabs = wrap(np.fabs)
exp = wrap(np.exp)
exp2 = wrap(np.exp2)
expm1 = wrap(np.expm1)
log = wrap(np.log)
log2 = wrap(np.log2)
log10 = wrap(np.log10)
log1p = wrap(np.log1p)
sin = wrap(np.sin)
cos = wrap(np.cos)
tan = wrap(np.tan)
arcsin = wrap(np.arcsin)
arccos = wrap(np.arccos)
arctan = wrap(np.arctan)
arctan2 = wrap(np.arctan2)
sinh = wrap(np.sinh)
cosh = wrap(np.cosh)
tanh = wrap(np.tanh)
arcsinh = wrap(np.arcsinh)
arccosh = wrap(np.arccosh)
arctanh = wrap(np.arctanh)
reciprocal = wrap(np.reciprocal)
hypot = wrap(np.hypot)
logaddexp = wrap(np.logaddexp)
logaddexp2 = wrap(np.logaddexp2)
maximum = wrap(np.maximum)
minimum = wrap(np.minimum)
fmax = wrap(np.fmax)
fmin = wrap(np.fmin)
deg2rad = wrap(np.deg2rad)
rad2deg = wrap(np.rad2deg)
radians = deg2rad
degrees = rad2deg
sinc = wrap(np.sinc)
mod = wrap(np.mod)
remainder = mod
fmod = wrap(np.fmod)
_where_p = wrap(np.where, "where")
real = wrap(np.real)
imag = wrap(np.imag)
conj = wrap(np.conj)
conjugate = conj
angle = wrap(np.angle)
copysign = wrap(np.copysign)
nextafter = wrap(np.nextafter)


_clip_p = wrap(lambda a, lo, hi: np.clip(a, lo, hi), "clip")

# Piecewise-constant and logical functions: outputs carry no derivative.
floor = wrap_nondiff(np.floor, "floor")
ceil = wrap_nondiff(np.ceil, "ceil")
rint = wrap_nondiff(np.rint, "rint")
trunc = wrap_nondiff(np.trunc, "trunc")
fix = wrap_nondiff(np.fix, "fix")
sign = wrap_nondiff(np.sign, "sign")
signbit = wrap_nondiff(np.signbit, "signbit")
floor_divide = wrap_nondiff(np.floor_divide, "floor_divide")
equal = wrap_nondiff(np.equal, "equal")
not_equal = wrap_nondiff(np.not_equal, "not_equal")
less = wrap_nondiff(np.less, "less")
less_equal = wrap_nondiff(np.less_equal, "less_equal")
greater = wrap_nondiff(np.greater, "greater")
greater_equal = wrap_nondiff(np.greater_equal, "greater_equal")
logical_and = wrap_nondiff(np.logical_and, "logical_and")
logical_or = wrap_nondiff(np.logical_or, "logical_or")
logical_not = wrap_nondiff(np.logical_not, "logical_not")
logical_xor = wrap_nondiff(np.logical_xor, "logical_xor")
isfinite = wrap_nondiff(np.isfinite, "isfinite")
isinf = wrap_nondiff(np.isinf, "isinf")
isnan = wrap_nondiff(np.isnan, "isnan")
isclose = wrap_nondiff(np.isclose, "isclose")
allclose = wrap_nondiff(np.allclose, "allclose")
array_equal = wrap_nondiff(np.array_equal, "array_equal")
bitwise_and = wrap_nondiff(np.bitwise_and, "bitwise_and")
bitwise_or = wrap_nondiff(np.bitwise_or, "bitwise_or")
bitwise_xor = wrap_nondiff(np.bitwise_xor, "bitwise_xor")
invert = wrap_nondiff(np.invert, "invert")
left_shift = wrap_nondiff(np.left_shift, "left_shift")
right_shift = wrap_nondiff(np.right_shift, "right_shift")
heaviside = wrap_nondiff(np.heaviside, "heaviside")
gcd = wrap_nondiff(np.gcd, "gcd")
lcm = wrap_nondiff(np.lcm, "lcm")
iscomplex = wrap_nondiff(np.iscomplex, "iscomplex")
isreal = wrap_nondiff(np.isreal, "isreal")
isneginf = wrap_nondiff(np.isneginf, "isneginf")
isposinf = wrap_nondiff(np.isposinf, "isposinf")
spacing = wrap_nondiff(np.spacing, "spacing")
round = wrap_nondiff(np.round, "round")
around = round


def _bcast(r, ans):
    """A JVP contribution broadcast to the output's shape."""
    return r if shape(r) == shape(ans) else fnp.broadcast_to(r, shape(ans))


def _def_unary(f, d):
    if f in _DOMAIN_EDGES:
        def rule(g, ans, x, *a, **k):
            # At the edge of the domain the derivative is infinite, as in PyTorch; NumPy
            # already warned about the forward value there.
            with np.errstate(divide="ignore", invalid="ignore"):
                return g * d(ans, x)
    else:  # errstate costs ~1 us a call: only ops with domain edges pay it
        def rule(g, ans, x, *a, **k):
            return g * d(ans, x)
    defvjp(f, rule)
    defjvp(f, rule)


def _def_binary(f, dx, dy):
    defvjp(f, lambda g, ans, x, y: unbroadcast(g * dx(ans, x, y), shape(x)),
              lambda g, ans, x, y: unbroadcast(g * dy(ans, x, y), shape(y)))
    defjvp(f, lambda t, ans, x, y: _bcast(t * dx(ans, x, y), ans),
              lambda t, ans, x, y: _bcast(t * dy(ans, x, y), ans))


def _where0(cond, v):
    """`v` where cond holds, else 0 (keeping the dtype; a 0-d zero, no full-size fill)."""
    return fnp.where(cond, v, fnp.zeros_like(v, shape=()))


# Ops whose derivative is infinite (or undefined) at an edge of their domain.
_DOMAIN_EDGES = {sqrt, cbrt, log, log2, log10, log1p, arcsin, arccos, arccosh, arctanh,
                 reciprocal}
_LN2 = float(np.log(2.0))
_LN10 = float(np.log(10.0))

# ----------------------------------------------------------------------------- unary rules

_def_unary(square,     lambda ans, x: 2 * x)
_def_unary(sqrt,       lambda ans, x: 0.5 / ans)
_def_unary(cbrt,       lambda ans, x: 1 / (3 * ans * ans))
_def_unary(fabs,       lambda ans, x: fnp.sign(x))
_def_unary(exp,        lambda ans, x: ans)
_def_unary(exp2,       lambda ans, x: ans * _LN2)
_def_unary(expm1,      lambda ans, x: ans + 1)
_def_unary(log,        lambda ans, x: 1 / x)
_def_unary(log2,       lambda ans, x: 1 / (x * _LN2))
_def_unary(log10,      lambda ans, x: 1 / (x * _LN10))
_def_unary(log1p,      lambda ans, x: 1 / (1 + x))
_def_unary(sin,        lambda ans, x: fnp.cos(x))
_def_unary(cos,        lambda ans, x: -fnp.sin(x))
_def_unary(tan,        lambda ans, x: 1 + ans * ans)
_def_unary(arcsin,     lambda ans, x: 1 / fnp.sqrt(1 - x * x))
_def_unary(arccos,     lambda ans, x: -1 / fnp.sqrt(1 - x * x))
_def_unary(arctan,     lambda ans, x: 1 / (1 + x * x))
_def_unary(sinh,       lambda ans, x: fnp.cosh(x))
_def_unary(cosh,       lambda ans, x: fnp.sinh(x))
_def_unary(tanh,       lambda ans, x: 1 - ans * ans)
_def_unary(arcsinh,    lambda ans, x: 1 / fnp.sqrt(x * x + 1))
_def_unary(arccosh,    lambda ans, x: 1 / fnp.sqrt(x * x - 1))
_def_unary(arctanh,    lambda ans, x: 1 / (1 - x * x))
_def_unary(reciprocal, lambda ans, x: -ans * ans)
_def_unary(deg2rad,    lambda ans, x: np.pi / 180)
_def_unary(rad2deg,    lambda ans, x: 180 / np.pi)

# ----------------------------------------------------------------------------- complex numbers
# JAX's convention: a VJP is the transpose of the JVP under <u, v> = Re(sum(u * v)), so a
# holomorphic op's VJP multiplies by f'(z) (not its conjugate; every rule above holds for
# complex inputs as written), and grad of a real f of z is df/dx - i df/dy = 2 df/dz.
# abs, real, imag, conj and angle are not holomorphic: each gets its own VJP and JVP.


def _is_complex(x):
    return dtype_of(x).kind == "c"


def _unit(ans, x):
    """d|x|: sign(x) for real x (0 at 0, as PyTorch), x / |x| for complex x (0 at 0)."""
    if not _is_complex(x):
        return fnp.sign(x)
    zero = fnp.equal(ans, 0)
    return _where0(~zero, x / fnp.where(zero, fnp.ones_like(ans), ans))


defvjp(absolute, lambda g, ans, x: g * fnp.conj(_unit(ans, x)))
defjvp(absolute, lambda t, ans, x: fnp.real(fnp.conj(_unit(ans, x)) * t))
defvjp(real,  lambda g, ans, x: g + 0j if _is_complex(x) else g)
defjvp(real,  lambda t, ans, x: fnp.real(t))
defvjp(imag,  lambda g, ans, x: g * -1j if _is_complex(x) else g * 0.0)
defjvp(imag,  lambda t, ans, x: fnp.imag(t))
defvjp(conj,  lambda g, ans, x: fnp.conj(g))
defjvp(conj,  lambda t, ans, x: fnp.conj(t))


def iscomplexobj(x):
    """True if `x` has a complex dtype (numpy.iscomplexobj; no values are read)."""
    return dtype_of(x).kind == "c"


def isrealobj(x):
    """True if `x` does not have a complex dtype (numpy.isrealobj)."""
    return not iscomplexobj(x)


def real_if_close(a, tol=100):
    """`fnp.real(a)` if every imaginary part of complex `a` is below `tol` (in machine
    epsilons when tol > 1), else `a` (numpy.real_if_close). The result's dtype depends on
    the values, so it reads them (not inside jit); the gradient flows through either way."""
    if not hasattr(getval(a), "dtype"):  # a Python number: NumPy makes it an array first
        a = fnp.asarray(a)
    if not iscomplexobj(a):
        return a
    v = getval(a)
    if tol > 1:
        tol = np.finfo(v.dtype).eps * tol
    xp = array_module(v)
    return fnp.real(a) if bool(xp.all(xp.abs(v.imag) < tol)) else a


def _vjp_angle(g, ans, x, deg=False):
    return g * ((-180j / np.pi if deg else -1j) / x) if _is_complex(x) else g * 0.0


def _jvp_angle(t, ans, x, deg=False):
    return fnp.imag(t / x) * (180 / np.pi if deg else 1.0) if _is_complex(x) else t * 0.0


defvjp(angle, _vjp_angle)
defjvp(angle, _jvp_angle)


def _sinc_deriv_impl(x, k):
    """The k-th derivative (k >= 1) of sinc(x) = sin(pi x) / (pi x), computed stably: the
    Maclaurin series where |x| < 1 (the closed form cancels catastrophically near 0, where
    the derivatives of order 2 and up came out 0 at 0 and garbage next to it), and Leibniz's
    rule on sin(pi x) * 1 / (pi x) elsewhere."""
    xp = array_module(x)
    x = xp.asarray(x)
    x = x.astype(np.result_type(x.dtype, 1.0), copy=False)
    small = xp.abs(x) < 1
    xs = xp.where(small, x, 0)
    series = xp.zeros_like(x)
    for j in range((k + 1) // 2, (k + 1) // 2 + 22):  # terms fall below 1e-17 by then
        c = (-1) ** j * np.pi ** (2 * j) / ((2 * j + 1) * math.factorial(2 * j - k))
        series = series + c * xs ** (2 * j - k)
    xl = xp.where(small, 1, x)
    closed = xp.zeros_like(x)
    for m in range(k + 1):
        closed = closed + (math.comb(k, m) * np.pi ** (m - 1) * (-1) ** (k - m)
                           * math.factorial(k - m) * xp.sin(np.pi * xl + m * np.pi / 2)
                           / xl ** (k - m + 1))
    return xp.where(small, series, closed)[()]


# sinc's derivatives as one primitive whose derivative is the next one: every order is
# stable at and near 0 (sinc''(0) = -pi^2/3, not the 0 a masked closed form gave).
_sinc_deriv = wrap(_sinc_deriv_impl, "sinc_deriv")
defvjp(_sinc_deriv, lambda g, ans, x, k: g * _sinc_deriv(x, k + 1))
defjvp(_sinc_deriv, lambda t, ans, x, k: t * _sinc_deriv(x, k + 1))


_def_unary(sinc, lambda ans, x: _sinc_deriv(x, 1))

# Linear unary ops keep the exact zero-cost form.
defvjp(negative, lambda g, ans, x: -g)
defjvp(negative, lambda t, ans, x: -t)
defvjp(positive, lambda g, ans, x: g)
defjvp(positive, lambda t, ans, x: t)

# ----------------------------------------------------------------------------- binary rules

defvjp(add,      lambda g, ans, x, y: unbroadcast(g, shape(x)),
                 lambda g, ans, x, y: unbroadcast(g, shape(y)))
defjvp(add,      lambda t, ans, x, y: _bcast(t, ans),
                 lambda t, ans, x, y: _bcast(t, ans))
defvjp(subtract, lambda g, ans, x, y: unbroadcast(g, shape(x)),
                 lambda g, ans, x, y: unbroadcast(-g, shape(y)))
defjvp(subtract, lambda t, ans, x, y: _bcast(t, ans),
                 lambda t, ans, x, y: _bcast(-t, ans))
defvjp(multiply, lambda g, ans, x, y: unbroadcast(g * y, shape(x)),
                 lambda g, ans, x, y: unbroadcast(x * g, shape(y)))
defjvp(multiply, lambda t, ans, x, y: _bcast(t * y, ans),
                 lambda t, ans, x, y: _bcast(x * t, ans))
defvjp(divide,   lambda g, ans, x, y: unbroadcast(g / y, shape(x)),
                 lambda g, ans, x, y: unbroadcast(-g * ans / y, shape(y)))
defjvp(divide,   lambda t, ans, x, y: _bcast(t / y, ans),
                 lambda t, ans, x, y: _bcast(-t * ans / y, ans))


def _over_or_zero(a, b):
    """a / b, and 0 where b == 0: hypot's gradient at (0, 0) is 0 as the norm's, arctan2's
    is 0 as PyTorch's (both NaN before), and so are their higher orders there."""
    zero = fnp.equal(b, 0)
    if isinstance(zero, (np.ndarray, np.generic)) and not zero.any():  # (no GPU sync)
        return a / b
    return _where0(~zero, a / fnp.where(zero, fnp.ones_like(b), b))


def _pow_dx(ans, x, y):
    # y x**(y-1), taken as 0 where y == 0: x**0 is constant 1, so PyTorch and autograd give
    # 0, not 0 * inf at x == 0. There y is replaced by 1 so nothing computes 0**-1 (nor
    # tiny**-2 at the next order), to any order. A traced y keeps its derivative 1 / x
    # there, so it is replaced only where x == 0 too.
    traced_y = isinstance(y, Tracer)
    edge = fnp.equal(y, 0) & fnp.equal(x, 0) if traced_y else fnp.equal(y, 0)
    if isinstance(edge, (np.ndarray, np.generic, bool)) and not edge.any():  # no GPU sync
        return y * fnp.power(x, y - 1)
    d = y * fnp.power(x, fnp.where(edge, fnp.ones_like(y), y) - 1)
    return _where0(~edge, d) if traced_y else d  # (the y-derivative at (0, 0) is 0 too)


def _pow_dy(ans, x, y):
    # d/dy x**y = x**y log x; taken as 0 where x == 0 (PyTorch's convention)
    safe = fnp.where(x == 0, fnp.ones_like(x), x)
    return _where0(x != 0, ans * fnp.log(safe))


_def_binary(power,      _pow_dx, _pow_dy)
_def_binary(hypot,      lambda ans, x, y: _over_or_zero(x, ans),
                        lambda ans, x, y: _over_or_zero(y, ans))
_def_binary(logaddexp,  lambda ans, x, y: fnp.exp(x - ans), lambda ans, x, y: fnp.exp(y - ans))
_def_binary(logaddexp2, lambda ans, x, y: fnp.exp2(x - ans), lambda ans, x, y: fnp.exp2(y - ans))
_def_binary(arctan2,    lambda ans, y, x: _over_or_zero(x, x * x + y * y),
                        lambda ans, y, x: _over_or_zero(-y, x * x + y * y))
_def_binary(mod,        lambda ans, x, y: 1.0, lambda ans, x, y: -fnp.floor_divide(x, y))
_def_binary(fmod,       lambda ans, x, y: 1.0, lambda ans, x, y: -fnp.trunc(x / y))
_def_binary(copysign,   lambda ans, x, y: fnp.sign(x) * fnp.sign(ans), lambda ans, x, y: 0.0)
# nextafter(x, y) is x moved by one ulp: slope 1 in x (as PyTorch's), 0 in y
_def_binary(nextafter,  lambda ans, x, y: 1.0, lambda ans, x, y: 0.0)


# Ties share the gradient equally between both arguments, as PyTorch's maximum/minimum.
# (np.heaviside would say this in one call but is ~20x slower than two comparisons.)
def _select_weight(ans, win, tie):
    if isinstance(tie, (np.ndarray, np.generic)) and not tie.any():  # (no GPU sync for CuPy)
        return win  # a boolean mask: g * win keeps g's dtype
    return fnp.astype(fnp.where(tie, 0.5, win), dtype_of(ans), copy=False)


_def_binary(maximum, lambda ans, x, y: _select_weight(ans, fnp.greater(x, y), fnp.equal(x, y)),
                     lambda ans, x, y: _select_weight(ans, fnp.less(x, y), fnp.equal(x, y)))
_def_binary(minimum, lambda ans, x, y: _select_weight(ans, fnp.less(x, y), fnp.equal(x, y)),
                     lambda ans, x, y: _select_weight(ans, fnp.greater(x, y), fnp.equal(x, y)))
# fmax/fmin ignore NaNs: the non-NaN argument wins; on ties the first argument takes the
# whole gradient (PyTorch's fmax/fmin).
def _first_wins(ans, win):
    return fnp.astype(win, dtype_of(ans), copy=False)


def _second_wins(ans, win):
    return fnp.astype(~win, dtype_of(ans), copy=False)


_def_binary(fmax, lambda ans, x, y: _first_wins(ans, (x >= y) | fnp.isnan(y)),
                  lambda ans, x, y: _second_wins(ans, (x >= y) | fnp.isnan(y)))
_def_binary(fmin, lambda ans, x, y: _first_wins(ans, (x <= y) | fnp.isnan(y)),
                  lambda ans, x, y: _second_wins(ans, (x <= y) | fnp.isnan(y)))


# where(cond, x, y): the condition carries no derivative.
defvjp(_where_p, None,
       lambda g, ans, c, x, y: unbroadcast(_where0(c, g), shape(x)),
       lambda g, ans, c, x, y: unbroadcast(_where0(~fnp.asarray(c, dtype=bool), g), shape(y)))
defjvp(_where_p, None,
       lambda t, ans, c, x, y: _bcast(_where0(c, t), ans),
       lambda t, ans, c, x, y: _bcast(_where0(~fnp.asarray(c, dtype=bool), t), ans))


# clip(a, a_min, a_max) is min(max(a, a_min), a_max): inside the closed interval the gradient
# flows to `a` (PyTorch's clamp); below it to a_min, above it to a_max. Where a_min > a_max the
# result is a_max whatever `a` is, so the gradient is a_max's (NumPy's value, PyTorch's gradient).
def _clip_masks(a, lo, hi):
    none = fnp.zeros_like(a, dtype=bool)
    below = none if lo is None else fnp.less(a, lo)
    above = none if hi is None else fnp.greater(a if lo is None else fnp.maximum(a, lo), hi)
    return ~(below | above), below & ~above, above


def _clip_rules(k):
    def vjp(g, ans, a, lo, hi):
        arg = (a, lo, hi)[k]
        return unbroadcast(_where0(_clip_masks(a, lo, hi)[k], g), shape(arg))

    def jvp(t, ans, a, lo, hi):
        return _bcast(_where0(_clip_masks(a, lo, hi)[k], t), ans)
    return vjp, jvp


for _k in range(3):
    defvjp(_clip_p, _clip_rules(_k)[0], argnums=(_k,))
    defjvp(_clip_p, _clip_rules(_k)[1], argnums=(_k,))
del _k


def clip(a, a_min=None, a_max=None, *, min=None, max=None):
    """Clip values to [a_min, a_max] (NumPy 2 semantics; `min`/`max` are aliases)."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        raise ValueError("clip: give at least one of a_min and a_max.")
    return _clip_p(a, lo, hi)


def where(condition, x=None, y=None):
    """`x` where `condition` holds, else `y`; with only `condition`, its nonzero indices."""
    if x is None and y is None:
        return fnp.nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given.")
    return _where_p(condition, x, y)


# NumPy 2 array-API aliases.
acos, asin, atan, atan2 = arccos, arcsin, arctan, arctan2
acosh, asinh, atanh, pow = arccosh, arcsinh, arctanh, power
bitwise_not = invert  # defined in the non-differentiable loop above
bitwise_invert = invert

# ---------------------------------------------------------------- abstract evaluation, batching
# Ufuncs get both in `wrap` (broadcast shapes, NumPy's type resolution); the elementwise
# functions that are not ufuncs take the dtype from a 0-d stand-in and batch as ufuncs do.
# allclose and array_equal reduce whole arrays to one bool: vmap runs them per example.

for _f in (sinc, real, imag, angle, round, fix, isclose, iscomplex, isreal,
           isneginf, isposinf, _where_p, _clip_p):
    defabstract_eval(_f, elementwise_rule(as_primitive(_f).impl))
    defbatch(_f, elementwise_batch(_f))
for _f in (allclose, array_equal):
    defabstract_eval(_f, lambda *args, **kw: ShapedArray((), bool, xp=xp_of(args)))
del _f
defabstract_eval(_sinc_deriv, elementwise_rule(_sinc_deriv_impl))
defbatch(_sinc_deriv, elementwise_batch(_sinc_deriv))
