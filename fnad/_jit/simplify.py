"""Algebraic simplifications of a Graph that give the same bits: `simplify(graph)`.

Each rule replaces an equation's result by a value already there, or a constant argument
by a smaller one, only where the result keeps its shape, dtype and every bit:
  - `x * 1`, `1 * x` (a Python 1 or an array of ones that broadcasts nothing) -> x
  - `x - 0`, `x + -0.0`, and `x + 0` for integer and bool x -> x
    (`x + 0.0` on floats is kept: -0.0 + 0.0 is +0.0, not -0.0)
  - `x / 1`, `x ** 1` -> x
  (on complex results only `x - (0+0j)` and `x + (-0-0j)`: the others change infinite parts)
  - `negative(negative(x))` -> x
  - `astype(x, dtype)` with x already of that dtype, `copy(x)`, `positive(x)` -> x (an
    output that then shares an input's buffer is copied again by `output_copies`)
  - an array constant whose elements are all equal, in an elementwise op whose other
    operand already has the result's shape -> a 0-d array of the same dtype and value
    ("broadcast of constants": the op reads one number instead of a broadcast array)
  - a sum of gradients of slices that tile an axis -> one concatenate (fnad/_jit/tiles.py)
The counts go into `graph.notes`.
"""

import numpy as np

from .._graph.ir import Eqn, Var, rebuild, substitute
from .tiles import join_tiles

__all__ = ["simplify"]


def _is_value(a, v, dtype):
    """Whether the constant `a` is the number `v` everywhere (for floats: with v's sign),
    with a dtype that changes nothing."""
    if dtype.kind == "c":
        return _is_complex_value(a, v, dtype)
    float_like = dtype.kind == "f"
    if type(a) in (bool, int, float):
        return a == v and (not float_like or np.signbit(float(a)) == np.signbit(v))
    if type(a) is np.ndarray or isinstance(a, np.generic):
        if a.dtype != dtype or a.size == 0:
            return False
        b = np.asarray(a)
        return bool(np.all(b == v)) and (not float_like or
                                         bool(np.all(np.signbit(b) == np.signbit(v))))
    return False


def _is_complex_value(a, v, dtype):
    """For a complex result: whether both parts of `a` are `v` with v's sign. Only then does
    the rule keep every bit: x - (0+0j) and x + (-0-0j) are x, but complex x * 1, x / 1 and
    x ** 1 are not (infinite parts give NaN, and -0.0 parts may turn +0.0), and as no 1
    has an imaginary part of 1 they never apply."""
    if type(a) in (bool, int, float, complex):
        parts = (complex(a).real, complex(a).imag)
    elif (type(a) is np.ndarray or isinstance(a, np.generic)) and a.dtype == dtype and a.size:
        parts = (np.real(a), np.imag(a))
    else:
        return False
    return all(bool(np.all(p == v)) and bool(np.all(np.signbit(p) == np.signbit(v)))
               for p in parts)


def _same(x, out):
    """x is a Var that can stand for the result (same shape, dtype and weak type)."""
    return type(x) is Var and x.aval == out


def _identity(e, out):
    """The argument the equation's result equals, or None."""
    name, args = e.prim.name, e.args
    if e.kwargs or len(args) not in (1, 2):
        return None, None
    if len(args) == 1:
        x = args[0]
        return (x, name) if name in ("copy", "positive") and _same(x, out) else (None, None)
    if len(args) == 2:
        x, y = args
        if name in ("multiply", "add") and _same(y, out) and not _same(x, out):
            x, y = y, x  # constant first: look at it second
        if not _same(x, out):
            return None, None
        dt = out.dtype
        if name == "astype":
            return (x, "astype same dtype") if _dtype(y) == dt else (None, None)
        if name == "multiply" and _is_value(y, 1.0, dt):
            return x, "x*1"
        if name == "divide" and _is_value(y, 1.0, dt) and dt.kind in "fc":
            return x, "x/1"
        if name == "power" and _is_value(y, 1.0, dt) and dt.kind in "fc":
            return x, "x**1"
        if name == "subtract" and _is_value(y, 0.0, dt) and dt.kind != "b":
            return x, "x-0"
        if name == "add" and _is_value(y, 0.0 if dt.kind in "biu" else -0.0, dt):
            return x, "x+0"
    return None, None


def _dtype(y):
    try:
        return np.dtype(y)
    except TypeError:
        return None


def _uniform(a):
    """A 0-d copy of an array constant whose elements are all equal (same bits), or None."""
    if type(a) is not np.ndarray or a.ndim == 0 or a.size < 2:
        return None
    if a.dtype.kind not in "biuf":
        return None
    raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.itemsize)
    if np.array_equal(raw, np.broadcast_to(raw[:1], raw.shape)):
        return np.ascontiguousarray(a).reshape(-1)[:1].copy().reshape(())
    return None


def _shrink_constants(e, out):
    """Args with uniform array constants made 0-d where that changes no shape."""
    impl = e.prim.impl
    if not (isinstance(impl, np.ufunc) and impl.signature is None and impl.nin == 2
            and len(e.args) == 2 and not e.kwargs):
        return None
    x, y = e.args
    for const, other, first in ((y, x, False), (x, y, True)):
        if type(other) is Var and other.aval.shape == out.shape:
            small = _uniform(const)
            if small is not None:
                return (small, other) if first else (other, small)
    return None


def simplify(graph):
    """`graph` with the rules above applied; counts in its notes."""
    return join_tiles(_identities(graph))


def _identities(graph):
    mapping, counts, kept = {}, {}, []
    negated = {}  # result Var of negative(x) -> x
    for e in graph.eqns:
        if mapping:
            e = substitute([e], [], mapping)[0][0]
        out = e.outvars[0].aval if len(e.outvars) == 1 else None
        if out is not None and not e.prim.multiple_results:
            x, rule = _identity(e, out)
            if x is None and e.prim.name == "negative" and len(e.args) == 1:
                inner = negated.get(e.args[0]) if type(e.args[0]) is Var else None
                if inner is not None and inner.aval == out:
                    x, rule = inner, "-(-x)"
                elif type(e.args[0]) is Var:
                    negated[e.outvars[0]] = e.args[0]
            if x is not None:
                mapping[e.outvars[0]] = x
                counts[rule] = counts.get(rule, 0) + 1
                continue
            args = _shrink_constants(e, out)
            if args is not None:
                e = Eqn(e.prim, args, e.kwargs, e.outvars, e.scope)
                counts["uniform constant -> 0-d"] = counts.get("uniform constant -> 0-d",
                                                               0) + 1
        kept.append(e)
    if not counts:
        return graph
    eqns, outvars = substitute(kept, graph.outvars, mapping)
    text = ", ".join(f"{k} {n}" for k, n in counts.items())
    return rebuild(graph, eqns, outvars, note=f"simplify: {text}")
