"""Forward mode: dual-number tracers that push tangents through each primitive's JVP rules.

A `JVPTrace` computes each primitive on the primal values inside its tracers and its output
tangent from the JVP rules (`prim.jvp_all`, else one `prim.jvps[i]` per traced argument).
Rules are written with `fnad.numpy`, so under an outer trace they are traced in turn.
"""

from .._core.custom import bind_checkpoint
from .._core.tracer import Trace, Tracer, bind_traced, finish_trace, levels
from .._core.tree import tree_flatten, tree_unflatten
from .values import ValueTracer, add_cotangents, pass_through, zeros_like_value

__all__ = ["JVPTrace", "JVPTracer", "trace_forward", "unbox_forward", "refuse_forward_mode",
           "forward_mode_error"]


class JVPTracer(ValueTracer):
    __slots__ = ("_value", "_tangent", "_trace")
    transforms = "forward-mode (jvp, jacfwd, hessian)"

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
            return JVPTracer(ans, _complex_if_complex(t_out, ans), self)
        outs = [JVPTracer(a, zeros_like_value(a) if t is None else t, self)
                for a, t in zip(ans, t_out)]
        return tuple(outs) if isinstance(ans, tuple) else outs

    def process_custom_vjp(self, rule, args):
        refuse_forward_mode(rule.name, rule.flatten(args)[0])

    def process_custom_jvp(self, rule, args):
        # the rule gives the tangent; its primal and tangent inputs are the values below
        flat, in_tree = rule.flatten(args)
        own = [type(x) is JVPTracer and x._trace is self for x in flat]
        vals = [x._value if o else x for x, o in zip(flat, own)]
        tans = [x._tangent if o and x._tangent is not None else zeros_like_value(v)
                for x, o, v in zip(flat, own, vals)]
        out, t_out = rule.jvp_leaves(args, in_tree, vals, tans)
        out_flat, out_tree = tree_flatten(out)
        return tree_unflatten(out_tree, [JVPTracer(o, t, self) for o, t in
                                         zip(out_flat, tree_flatten(t_out)[0])])

    def process_checkpoint(self, fun, args, kwargs, name):
        # the JVP of `fun`, itself checkpointed, so that reverse mode below still recomputes
        flat, in_tree = tree_flatten((args, kwargs))
        primals = [x._value if type(x) is JVPTracer and x._trace is self else x for x in flat]
        tangents = [x._tangent if type(x) is JVPTracer and x._trace is self else None
                    for x in flat]

        def push_forward(primals, tangents):
            inner, out = trace_forward(lambda t: fun(*t[0], **t[1]), primals, tangents,
                                       in_tree, name)
            out_flat, out_tree = tree_flatten(out)
            prim_out, tan_out = unbox_forward(inner, out_flat)
            return tree_unflatten(out_tree, prim_out), tree_unflatten(out_tree, tan_out)

        out, t_out = bind_checkpoint(push_forward, (primals, tangents), {}, name)
        out_flat, out_tree = tree_flatten(out)
        return tree_unflatten(out_tree, [JVPTracer(o, t, self) for o, t in
                                         zip(out_flat, tree_flatten(t_out)[0])])


def _complex_if_complex(t, ans):
    """A real tangent of a complex output is made complex (the tangent of promoting a real
    value to complex, e.g. `g + 0j` in a VJP rule differentiated in forward mode, is the
    promoted tangent): a tangent has its primal's dtype kind, as reverse mode's cotangents
    have (reverse.py's `_real_if_real`)."""
    t_dtype = getattr(t, "dtype", None)
    if t_dtype is None or t_dtype.kind == "c":
        return t
    a_dtype = getattr(ans, "dtype", None)
    return t + 0j if a_dtype is not None and a_dtype.kind == "c" else t


def trace_forward(call, primals, tangents, in_tree, name):
    """Run `call(tree)` on the pytree `in_tree` of `primals`, those with a tangent (not None)
    boxed in a new JVPTrace; returns (trace, output)."""
    trace = JVPTrace()
    boxed = [p if t is None else JVPTracer(p, t, trace) for p, t in zip(primals, tangents)]
    try:
        return trace, call(tree_unflatten(in_tree, boxed))
    finally:
        finish_trace(trace, name)


def unbox_forward(trace, out_flat):
    """The primal and tangent (zeros where none) of each output leaf of a forward trace."""
    prim_out, tan_out = [], []
    for o in out_flat:
        if isinstance(o, JVPTracer) and o._trace is trace:
            prim_out.append(o._value)
            tan_out.append(o._tangent if o._tangent is not None else zeros_like_value(o._value))
        else:
            prim_out.append(o)
            tan_out.append(zeros_like_value(o))
    return prim_out, tan_out


def forward_mode_error(name):
    return TypeError(f"can't apply forward-mode autodiff (jvp, jacfwd, hessian) to the "
                     f"custom_vjp function {name}: it defines only a VJP. Use reverse mode "
                     "(grad, vjp, jacrev; jacrev(jacrev(f)) for a Hessian), or call a version "
                     "of the function without custom_vjp.")


def refuse_forward_mode(name, leaves):
    """custom_vjp defines only a VJP: forward mode at any level is refused, as in JAX."""
    for x in leaves:
        if any(isinstance(v, JVPTracer) for v in levels(x)):
            raise forward_mode_error(name)
