"""`jax.lax`'s elementwise operations, built from fnad.numpy's primitives.

Each is a few fnad.numpy calls, so grad, jvp, vmap and jit already hold for it. Where
lax's semantics differ from NumPy's the difference is written out here: `div` of
integers rounds toward zero, `rem` takes the dividend's sign, `logistic` is computed
as `(1 + tanh(x / 2)) / 2` (no overflow for any x). Arrays of mixed dtypes promote as
fnad.numpy promotes them, where JAX's lax raises; Python scalars follow JAX's rule
(`same_kinds`, docs/lax.md).
"""

import builtins
import enum

import numpy as np

from .. import numpy as fnp
from .._ad.transforms import stop_gradient as _stop_gradient
from .._core.abstract import aval_of
from ..numpy._precision import Precision, check_precision  # noqa: F401 (re-exported)

__all__ = ["add", "sub", "mul", "div", "rem", "max", "min", "neg", "exp", "exp2", "log",
           "log1p", "expm1", "tanh", "logistic", "rsqrt", "sqrt", "cbrt", "square",
           "integer_pow", "pow", "abs", "sign", "sin", "cos", "tan", "atan2", "floor", "ceil",
           "round", "is_finite", "eq", "ne", "lt", "le", "gt", "ge", "select", "select_n",
           "clamp", "convert_element_type", "stop_gradient", "Precision", "full", "full_like",
           "iota", "broadcasted_iota", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh",
           "atanh", "reciprocal", "nextafter", "real", "imag", "conj", "complex", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "RoundingMethod", "optimization_barrier"]


def _dtype(x):
    return aval_of(x).dtype


_PY_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def same_kinds(fname, *args):
    """JAX's rule for Python scalars in lax: one takes the dtype of the arrays it meets only
    when of the same kind (`lax.add(x_f32, 1.0)` runs, `lax.add(x_f32, 1)` and
    `lax.add(1, 1.0)` raise). Arrays of different dtypes promote (docs/lax.md)."""
    weak = [a for a in args if type(a) in _PY_KIND]
    if not weak:
        return
    strong = {"i" if _dtype(a).kind == "u" else _dtype(a).kind
              for a in args if type(a) not in _PY_KIND}
    kinds = strong or {_PY_KIND[type(weak[0])]}
    bad = [a for a in weak if _PY_KIND[type(a)] not in kinds]
    if bad:
        names = sorted({str(_dtype(a)) for a in args if type(a) not in _PY_KIND}
                       | {f"Python {type(a).__name__}" for a in weak})
        raise TypeError(f"{fname} requires arguments of one dtype, got {', '.join(names)}; "
                        f"write the Python scalar {bad[0]!r} in the arrays' kind (e.g. 1.0 for "
                        "a float), convert with lax.convert_element_type, or use fnad.numpy, "
                        "which promotes.")


def _strict(fn, name):
    def op(x, y):
        same_kinds(f"lax.{name}", x, y)
        return fn(x, y)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"`{fn.__name__}(x, y)` elementwise (`jax.lax.{name}`)."
    return op


add = _strict(fnp.add, "add")
sub = _strict(fnp.subtract, "sub")
mul = _strict(fnp.multiply, "mul")


def div(x, y):
    """`x / y` elementwise (`jax.lax.div`); integers round toward zero, as in C.

    Example:
      div(np.array([7, -7]), 2)  # [3, -3]
    """
    same_kinds("lax.div", x, y)
    if np.issubdtype(np.result_type(_dtype(x), _dtype(y)), np.integer):
        return fnp.floor_divide(fnp.subtract(x, fnp.fmod(x, y)), y)
    return fnp.divide(x, y)


def rem(x, y):
    """The remainder of `div(x, y)` (`jax.lax.rem`): it has the sign of `x` (C's fmod),
    where NumPy's `%` takes the sign of `y`."""
    same_kinds("lax.rem", x, y)
    return fnp.fmod(x, y)


def max(x, y):
    """Elementwise maximum (`jax.lax.max`); a NaN in either operand gives NaN."""
    same_kinds("lax.max", x, y)
    return fnp.maximum(x, y)


def min(x, y):
    """Elementwise minimum (`jax.lax.min`); a NaN in either operand gives NaN."""
    same_kinds("lax.min", x, y)
    return fnp.minimum(x, y)


neg = fnp.negative
exp = fnp.exp
exp2 = fnp.exp2
log = fnp.log
log1p = fnp.log1p
expm1 = fnp.expm1
tanh = fnp.tanh
sqrt = fnp.sqrt
cbrt = fnp.cbrt
square = fnp.square
abs = fnp.abs
sign = fnp.sign
sin = fnp.sin
cos = fnp.cos
tan = fnp.tan
atan2 = _strict(fnp.arctan2, "atan2")
floor = fnp.floor
ceil = fnp.ceil
is_finite = fnp.isfinite
eq = _strict(fnp.equal, "eq")
ne = _strict(fnp.not_equal, "ne")
lt = _strict(fnp.less, "lt")
le = _strict(fnp.less_equal, "le")
gt = _strict(fnp.greater, "gt")
ge = _strict(fnp.greater_equal, "ge")


sinh = fnp.sinh
cosh = fnp.cosh
asin = fnp.arcsin
acos = fnp.arccos
atan = fnp.arctan
asinh = fnp.arcsinh
acosh = fnp.arccosh
atanh = fnp.arctanh
reciprocal = fnp.reciprocal
nextafter = _strict(fnp.nextafter, "nextafter")
real = fnp.real
imag = fnp.imag
conj = fnp.conj
bitwise_and = fnp.bitwise_and
bitwise_or = fnp.bitwise_or
bitwise_xor = fnp.bitwise_xor
bitwise_not = fnp.invert
shift_left = fnp.left_shift
shift_right_arithmetic = fnp.right_shift  # NumPy's >> of a signed integer keeps the sign


def shift_right_logical(x, y):
    """`x >> y` filling with zeros, signed integers included (`jax.lax.shift_right_logical`):
    the shift runs on the unsigned integer of the same width."""
    dt = _dtype(x)
    if dt.kind != "i":
        return fnp.right_shift(x, y)
    unsigned = np.dtype(f"u{dt.itemsize}")
    return fnp.right_shift(fnp.asarray(x).astype(unsigned),
                           fnp.asarray(y).astype(unsigned)).astype(dt)


def complex(x, y):
    """`x + 1j * y` elementwise (`jax.lax.complex`)."""
    return fnp.add(x, fnp.multiply(1j, y))


def optimization_barrier(operand, /):
    """`operand` (a pytree) unchanged (`jax.lax.optimization_barrier`): fnad.jit does not
    move computations across program boundaries the way XLA does, so there is nothing to
    hold back."""
    return operand


class RoundingMethod(enum.IntEnum):
    """`jax.lax.RoundingMethod`: how `lax.round` rounds halves."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=0):
    """Round to the nearest integer (`jax.lax.round`): halves away from zero
    (`rounding_method=0`, lax's default) or to even (`1`, NumPy's `round`)."""
    method = getattr(rounding_method, "value", rounding_method)
    if method == 1:
        return fnp.round(x)
    if method != 0:
        raise ValueError(f"lax.round: rounding_method must be 0 (AWAY_FROM_ZERO) or 1 "
                         f"(TO_NEAREST_EVEN), got {rounding_method!r}.")
    finite = fnp.isfinite(x)
    a = fnp.abs(fnp.where(finite, x, 0))  # (inf - floor(inf) would warn)
    down = fnp.floor(a)  # (not floor(a + 0.5): that rounds 0.49999999999999994 up)
    return fnp.where(finite, fnp.copysign(fnp.where(a - down >= 0.5, down + 1, down), x), x)


def logistic(x):
    """The logistic sigmoid `1 / (1 + exp(-x))` (`jax.lax.logistic`), computed as
    `(1 + tanh(x / 2)) / 2`, which neither overflows nor loses the tails' gradient."""
    return 0.5 * (fnp.tanh(0.5 * x) + 1.0)


def rsqrt(x):
    """`1 / sqrt(x)` elementwise (`jax.lax.rsqrt`)."""
    return fnp.reciprocal(fnp.sqrt(x))


def integer_pow(x, y):
    """`x ** y` for a Python int `y` (`jax.lax.integer_pow`), negative `y` included.

    Example:
      integer_pow(np.array([1.0, 2.0]), 3)  # [1.0, 8.0]
    """
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"lax.integer_pow: the exponent must be a Python int, got "
                        f"{type(y).__name__} {y!r}; use lax.pow for an array exponent.")
    y = int(y)
    out, base, n = None, x, builtins.abs(y)
    while n:  # square and multiply: exact products, so the gradient at x = 0 is exact too
        if n & 1:
            out = base if out is None else fnp.multiply(out, base)
        n >>= 1
        if n:
            base = fnp.multiply(base, base)
    if out is None:
        return fnp.ones_like(x)
    return fnp.reciprocal(out) if y < 0 else out


def pow(x, y):
    """`x ** y` elementwise (`jax.lax.pow`); `y` may be an array of floats or ints."""
    return fnp.power(x, y)


def select(pred, on_true, on_false):
    """`on_true` where the boolean `pred` holds, else `on_false` (`jax.lax.select`).

    `pred` is a scalar or has the operands' shape.
    """
    if _dtype(pred) != np.bool_:
        raise TypeError(f"lax.select: pred must be boolean, got {_dtype(pred)}; compare first "
                        "(e.g. x > 0), or use lax.select_n for an integer selector.")
    same_kinds("lax.select", on_true, on_false)
    return fnp.where(pred, on_true, on_false)


def select_n(which, *cases):
    """`cases[which]` elementwise (`jax.lax.select_n`): `which` is boolean (two cases) or an
    integer in `[0, len(cases))`; out-of-range indices give one of the cases, as in JAX
    (whose result is then unspecified).

    Example:
      select_n(np.array([0, 2, 1]), a, b, c)  # [a[0], c[1], b[2]]
    """
    if not cases:
        raise ValueError("lax.select_n: give at least one case.")
    dt = _dtype(which)
    if dt == np.bool_:
        if len(cases) > 2:
            raise ValueError(f"lax.select_n: a boolean selector picks from at most 2 cases, "
                             f"got {len(cases)}; use an integer selector.")
        return cases[0] if len(cases) == 1 else fnp.where(which, cases[1], cases[0])
    if not np.issubdtype(dt, np.integer):
        raise TypeError(f"lax.select_n: which must be boolean or integer, got {dt}.")
    out = cases[0]
    for i, case in enumerate(cases[1:], 1):
        out = fnp.where(fnp.equal(which, i), case, out)
    return out


def clamp(min, x, max):
    """`x` clipped to `[min, max]` elementwise (`jax.lax.clamp`; note lax's argument order).
    The bounds broadcast; gradients reach `x` inside the interval and the bound outside."""
    same_kinds("lax.clamp", min, x, max)
    return fnp.minimum(fnp.maximum(x, min), max)


def convert_element_type(operand, new_dtype):
    """`operand` as `new_dtype` (`jax.lax.convert_element_type`); floats to integers
    truncate toward zero, complex to real keeps the real part. Differentiable between
    floating dtypes."""
    dt = np.dtype(new_dtype)
    if np.iscomplexobj(np.zeros((), _dtype(operand))) and dt.kind != "c":
        operand = fnp.real(operand)
    return fnp.asarray(operand).astype(dt)


def stop_gradient(x):
    """`x`, with no derivative flowing through it (`jax.lax.stop_gradient`); pytrees too."""
    return _stop_gradient(x)


def full(shape, fill_value, dtype=None):
    """An array of `shape` filled with `fill_value` (`jax.lax.full`)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return fnp.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`."""
    av = aval_of(x)
    return full(av.shape if shape is None else shape, fill_value,
                av.dtype if dtype is None else dtype)


def iota(dtype, size):
    """`[0, 1, ..., size - 1]` as `dtype` (`jax.lax.iota`)."""
    return fnp.arange(int(size), dtype=np.dtype(dtype))


def broadcasted_iota(dtype, shape, dimension):
    """An array of `shape` counting along `dimension` (`jax.lax.broadcasted_iota`)."""
    shape = tuple(int(s) for s in shape)
    d = int(dimension) % len(shape)
    line = fnp.reshape(iota(dtype, shape[d]), (1,) * d + (shape[d],) + (1,) * (len(shape) - d - 1))
    return fnp.broadcast_to(line, shape)
