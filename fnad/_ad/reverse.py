"""Layer 2: reverse mode (a tape per trace) and forward mode (dual-number tracers).

A `RevTrace` records each primitive call on its level into a linear tape; the
backward pass walks the tape in reverse, calling each primitive's VJP rule
`rule(g, ans, *args, **kwargs)` for every argument that was traced on this
level. Rules are written with `fnad.numpy`, so when an outer trace is active
the backward pass is itself traced, which is how higher derivatives work.
A `JVPTrace` pushes tangents forward through each primitive's JVP rules.
"""

from .._core.abstract import aval_of
from .._core.backend import array_module
from .._core.tracer import Trace, Tracer, bind_traced, getval

__all__ = ["RevTrace", "RevTracer", "JVPTrace", "JVPTracer", "backward", "add_cotangents",
           "CustomNode", "zeros_like_value", "tracers_of", "pass_through"]

_PROJ = object()  # tape marker: output k of a multiple-result node


def zeros_like_value(x):
    """A plain zero array shaped like `x` (which may be traced)."""
    v = getval(x)
    xp = array_module(v)
    if isinstance(x, Tracer):  # its own shape: a batched value's has no batch axis
        return xp.zeros(x.shape, dtype=x.dtype)
    return xp.zeros(getattr(v, "shape", ()), dtype=getattr(v, "dtype", xp.float64))


def add_cotangents(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


class ValueTracer(Tracer):
    """An autodiff tracer, which holds a value (`_value`): its abstract value comes from the
    value's shape and dtype, and the four fields are read from the value directly (the same
    answer, without building a ShapedArray per access)."""

    __slots__ = ()
    aval = property(lambda s: aval_of(s._value))
    shape = property(lambda s: s._value.shape)
    dtype = property(lambda s: s._value.dtype)
    ndim = property(lambda s: s._value.ndim)
    size = property(lambda s: s._value.size)


class RevTracer(ValueTracer):
    __slots__ = ("_value", "_trace", "_idx")

    def __init__(self, value, trace, idx):
        self._value = value
        self._trace = trace
        self._idx = idx

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"RevTracer(level={self._trace.level}, value={self._value!r})"


class CustomNode:
    """A tape node whose VJP maps all output cotangents to all input cotangents at once."""

    __slots__ = ("name", "vjp_all")
    multiple_results = True

    def __init__(self, name, vjp_all):
        self.name = name
        self.vjp_all = vjp_all


class RevTrace(Trace):
    __slots__ = ("tape",)

    def __init__(self):
        super().__init__()
        self.tape = []

    def new_input(self, value):
        idx = len(self.tape)
        self.tape.append(None)
        return RevTracer(value, self, idx)

    def process(self, prim, args, kwargs):
        if prim.nondiff:
            return pass_through(self, prim, args, kwargs)
        vals = list(args)
        parents = []
        outer = False
        for i, a in enumerate(args):
            if not isinstance(a, Tracer):
                continue
            if type(a) is RevTracer and a._trace is self:
                a_val = vals[i] = a._value
                parents.append((i, a._idx))
                if isinstance(a_val, Tracer):
                    outer = True
            else:
                outer = True
        ans = bind_traced(prim, vals, kwargs) if outer else prim.impl(*vals, **kwargs)
        if prim.multiple_results:
            return self.record(prim, ans, vals, kwargs, parents)
        tape = self.tape
        tape.append((prim, ans, vals, kwargs, parents))
        return RevTracer(ans, self, len(tape) - 1)

    def record(self, prim, ans, vals, kwargs, parents):
        tape = self.tape
        idx = len(tape)
        tape.append((prim, ans, vals, kwargs, parents))
        if not prim.multiple_results:
            return RevTracer(ans, self, idx)
        n = len(ans)
        outs = []
        for k, a in enumerate(ans):
            tape.append((_PROJ, idx, k, n))
            outs.append(RevTracer(a, self, idx + 1 + k))
        return type(ans)(outs) if isinstance(ans, tuple) else outs


def pass_through(trace, prim, args, kwargs):
    """A non-differentiable primitive under an autodiff trace: computed on the values inside
    this trace's tracers, its outputs plain (or traced only by outer traces, which see it in
    turn, so that a staging trace can record it)."""
    vals = [a._value if isinstance(a, Tracer) and a._trace is trace else a for a in args]
    for v in vals:
        if isinstance(v, Tracer):
            return bind_traced(prim, vals, kwargs)
    return prim.impl(*vals, **kwargs)


def _real_if_real(c, x):
    """A complex cotangent for a real input `x` is its real part (JAX's convention: the
    transpose of promoting a real value to complex takes the real part)."""
    dt = getattr(c, "dtype", None)
    if dt is not None and dt.kind == "c" and x.dtype.kind != "c":
        return c.real
    return c


def backward(tape, seeds, consume=False):
    """Run the tape backwards from `seeds` [(idx, cotangent)]; returns the grads list.

    With `consume`, each entry is dropped once passed, so that the forward values it holds
    are freed during the backward pass (lower peak memory; the tape cannot be run again).
    """
    grads = [None] * len(tape)
    for idx, g in seeds:
        grads[idx] = add_cotangents(grads[idx], g)
    for idx in range(len(tape) - 1, -1, -1):
        g = grads[idx]
        entry = tape[idx]
        if consume:
            tape[idx] = None
        if g is None or entry is None:  # nothing flows here, or an input: keep its cotangent
            continue
        grads[idx] = None
        prim = entry[0]
        if prim is _PROJ:
            _, parent, k, n = entry
            slot = grads[parent]
            if slot is None:
                slot = grads[parent] = [None] * n
            slot[k] = add_cotangents(slot[k], g)
            continue
        _, ans, vals, kwargs, parents = entry
        if prim.multiple_results:
            g = tuple(zeros_like_value(a) if gi is None else gi for gi, a in zip(g, ans))
        if prim.vjp_all is not None:  # one rule for every argument (a CustomNode's takes g)
            cts = (prim.vjp_all(g) if type(prim) is CustomNode
                   else prim.vjp_all(g, ans, *vals, **kwargs))
            for i, p in parents:
                grads[p] = add_cotangents(grads[p], _real_if_real(cts[i], vals[i]))
            continue
        vjps = prim.vjps
        for i, p in parents:
            rule = vjps.get(i)
            if rule is None:
                raise prim.missing("vjp", i)
            c = _real_if_real(rule(g, ans, *vals, **kwargs), vals[i])
            old = grads[p]
            grads[p] = c if old is None else old + c
    return grads


class JVPTracer(ValueTracer):
    __slots__ = ("_value", "_tangent", "_trace")

    def __init__(self, value, tangent, trace):
        self._value = value
        self._tangent = tangent
        self._trace = trace

    @property
    def value(self):
        return self._value

    def __repr__(self):
        return f"JVPTracer(level={self._trace.level}, value={self._value!r})"


class JVPTrace(Trace):
    __slots__ = ()

    def process(self, prim, args, kwargs):
        if prim.nondiff:
            return pass_through(self, prim, args, kwargs)
        primals = []
        tangents = []
        outer = False
        for i, a in enumerate(args):
            if type(a) is JVPTracer and a._trace is self:
                a_val = a._value
                primals.append(a_val)
                tangents.append((i, a._tangent))
                if isinstance(a_val, Tracer):
                    outer = True
            else:
                primals.append(a)
                if isinstance(a, Tracer):
                    outer = True
        ans = bind_traced(prim, primals, kwargs) if outer else prim.impl(*primals, **kwargs)
        jvps = prim.jvps
        t_out = None
        if prim.jvp_all is not None:  # one rule for every argument (control flow)
            full = [None] * len(args)
            for i, t in tangents:
                full[i] = t
            t_out = prim.jvp_all(full, ans, *primals, **kwargs)
            tangents = ()
        for i, t in tangents:
            rule = jvps.get(i)
            if rule is None:
                raise prim.missing("jvp", i)
            c = rule(t, ans, *primals, **kwargs)
            if prim.multiple_results:
                t_out = c if t_out is None else tuple(map(add_cotangents, t_out, c))
            else:
                t_out = add_cotangents(t_out, c)
        if not prim.multiple_results:
            return JVPTracer(ans, t_out, self)
        outs = [JVPTracer(a, zeros_like_value(a) if t is None else t, self)
                for a, t in zip(ans, t_out)]
        return tuple(outs) if isinstance(ans, tuple) else outs


def tracers_of(leaves):
    """The innermost trace among `leaves`, or None."""
    top = None
    for x in leaves:
        if isinstance(x, Tracer) and (top is None or x._trace.level > top.level):
            top = x._trace
    return top

