"""Reverse mode: a tape per trace, run backwards with each primitive's VJP rules.

A `RevTrace` records each primitive call on its level into a linear tape; the backward pass
walks the tape in reverse, calling each primitive's VJP rule `rule(g, ans, *args, **kwargs)`
for every argument that was traced on this level. Rules are written with `fnad.numpy`, so
when an outer trace is active the backward pass is itself traced, which is how higher
derivatives work. A custom_vjp call is recorded as one node carrying its own rule; a
checkpoint call as one node whose rule runs the function again.
"""

from .._core.custom import bind_checkpoint, bind_custom_jvp
from .._core.tracer import Primitive, Trace, Tracer, bind_traced, finish_trace
from .._core.tree import tree_flatten, tree_unflatten
from .forward import refuse_forward_mode
from .values import (ValueTracer, add_cotangents, fit_cotangent, pass_through, shape_dtype,
                     zeros_like_value)

__all__ = ["RevTrace", "RevTracer", "backward", "CustomNode", "trace_reverse", "pull_back",
           "rule_cotangents", "custom_jvp_cotangents", "ReplayTrace", "tape_bytes",
           "tape_residuals"]

_PROJ = object()  # tape marker: output k of a multiple-result node

# fnad.config's debug_nans/debug_infs (fnad/_jit/debug.py): while on, RECORD_LINES[0] is a
# function giving the user's source line, recorded for each tape entry, and the backward pass
# keeps the node whose rule is running in BACKWARD_NODE[0] as (primitive name, forward line),
# so that a NaN made by a VJP rule is reported against the forward call it belongs to.
RECORD_LINES = [None]
BACKWARD_NODE = [None]
VALUE_CHECK = [None]  # `check(x) -> "nan", "inf" or None` while a switch is on


class RevTracer(ValueTracer):
    __slots__ = ("_value", "_trace", "_idx")
    transforms = "reverse-mode (grad, vjp, jacrev, hessian)"

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
    """A tape node whose VJP maps all output cotangents to all input cotangents at once
    (`residuals`: arrays it keeps besides its inputs, for `tape_bytes`)."""

    __slots__ = ("name", "vjp_all", "residuals")
    multiple_results = True

    def __init__(self, name, vjp_all):
        self.name = name
        self.vjp_all = vjp_all
        self.residuals = ()


class RevTrace(Trace):
    __slots__ = ("tape", "lines")

    def __init__(self):
        super().__init__()
        self.tape = []
        self.lines = None if RECORD_LINES[0] is None else {}

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
        if self.lines is not None:
            self.lines[len(tape)] = RECORD_LINES[0](2)
        tape.append((prim, ans, vals, kwargs, parents))
        return RevTracer(ans, self, len(tape) - 1)

    def record(self, prim, ans, vals, kwargs, parents):
        tape = self.tape
        idx = len(tape)
        if self.lines is not None:
            self.lines[idx] = RECORD_LINES[0](2)
        tape.append((prim, ans, vals, kwargs, parents))
        if not prim.multiple_results:
            return RevTracer(ans, self, idx)
        n = len(ans)
        outs = []
        for k, a in enumerate(ans):
            tape.append((_PROJ, idx, k, n))
            outs.append(RevTracer(a, self, idx + 1 + k))
        return type(ans)(outs) if isinstance(ans, tuple) else outs

    def _unbox(self, flat):
        """(the values inside this trace's tracers among `flat`, [(position, tape index)])."""
        vals = [x._value if type(x) is RevTracer and x._trace is self else x for x in flat]
        parents = [(i, x._idx) for i, x in enumerate(flat)
                   if type(x) is RevTracer and x._trace is self]
        return vals, parents

    def process_custom_vjp(self, rule, args):
        flat, in_tree = rule.flatten(args)
        refuse_forward_mode(rule.name, flat)
        vals, parents = self._unbox(flat)
        out, res = rule.fwd(*rule.fill_leaves(args, vals, in_tree))
        out_flat, out_tree = tree_flatten(out)
        fixed = [args[i] for i in rule.nondiff_argnums]

        def vjp_all(g):
            return rule_cotangents(rule, fixed, res, tree_unflatten(out_tree, list(g)),
                                   in_tree, vals)

        node = CustomNode(f"custom_vjp[{rule.name}]", vjp_all)
        return tree_unflatten(out_tree, list(self.record(node, tuple(out_flat), vals, {},
                                                         parents)))

    def process_custom_jvp(self, rule, args):
        # the value from the traces below; the VJP is the transpose of the jvp rule's
        # tangent map (linear in the tangents), pulled back through when it is needed
        flat, in_tree = rule.flatten(args)
        vals, parents = self._unbox(flat)
        out = bind_custom_jvp(rule, rule.fill_leaves(args, vals, in_tree))
        out_flat, out_tree = tree_flatten(out)

        def vjp_all(g):
            return custom_jvp_cotangents(rule, args, in_tree, vals, g)

        node = CustomNode(f"custom_jvp[{rule.name}]", vjp_all)
        return tree_unflatten(out_tree, list(self.record(node, tuple(out_flat), vals, {},
                                                         parents)))

    def process_checkpoint(self, fun, args, kwargs, name):
        flat, in_tree = tree_flatten((args, kwargs))
        vals, parents = self._unbox(flat)
        policy = getattr(name, "policy", None)
        if policy is not None:
            return self._checkpoint_policy(fun, vals, parents, in_tree, name, policy)
        v_args, v_kwargs = tree_unflatten(in_tree, vals)
        out = bind_checkpoint(fun, v_args, v_kwargs, name)  # traces below recompute too
        out_flat, out_tree = tree_flatten(out)
        traced = [i for i, _ in parents]

        def vjp_all(g):  # run `fun` again from its inputs, then pull `g` back through it
            trace, boxed, again = trace_reverse(lambda t: fun(*t[0], **t[1]), vals, traced,
                                                in_tree, name)
            grads = pull_back(trace, tree_flatten(again)[0], g, consume=True)
            cts = [None] * len(vals)
            for i in traced:
                c = grads[boxed[i]._idx]
                cts[i] = None if c is None else fit_cotangent(c, vals[i])
            return cts

        node = CustomNode(name, vjp_all)
        return tree_unflatten(out_tree, list(self.record(node, tuple(out_flat), vals, {},
                                                         parents)))


    def _checkpoint_policy(self, fun, vals, parents, in_tree, name, policy):
        """A checkpoint with a policy: `fun` runs once on a tape of its own, of which only
        the results the policy allows are kept; the backward pass runs `fun` again on a
        `ReplayTrace` that takes them instead of computing them. The forward run is itself
        a checkpoint call (of `fun` returning its outputs and the kept results) for the
        traces below: jit stages it as one operation, so its optimiser cannot merge what
        the backward pass recomputes with the forward pass."""
        traced = [i for i, _ in parents]
        call = lambda t: fun(*t[0], **t[1])
        trees = []  # the output structure, from the first run of `forward`

        def forward(*leaves):
            inner, _, out = trace_reverse(call, list(leaves), traced, in_tree, name)
            kept = [e[1] for e in inner.tape if e is not None and type(e[0]) is Primitive
                    and policy(e[0], *e[2], **e[3])]
            out_flat, tree = tree_flatten(out)
            trees.append(tree)
            return ([o._value if isinstance(o, RevTracer) and o._trace is inner else o
                     for o in out_flat], kept)  # the forward tape goes with `inner`

        out_flat, saved = bind_checkpoint(forward, tuple(vals), {}, str(name))
        out_tree = trees[0]

        def vjp_all(g):
            trace, boxed, again = trace_reverse(call, vals, traced, in_tree, name,
                                                ReplayTrace(policy, saved))
            grads = pull_back(trace, tree_flatten(again)[0], g, consume=True)
            return [None if i not in traced or grads[boxed[i]._idx] is None
                    else fit_cotangent(grads[boxed[i]._idx], vals[i]) for i in range(len(vals))]

        node = CustomNode(name, vjp_all)
        node.residuals = saved
        return tree_unflatten(out_tree, list(self.record(node, tuple(out_flat), vals, {},
                                                         parents)))


class ReplayTrace(RevTrace):
    """The backward pass's run of a checkpointed function with a policy: the calls the
    policy allowed take the results kept by the forward pass, in order, instead of
    computing them (their VJP rules see them as `ans`)."""

    __slots__ = ("policy", "saved", "k")

    def __init__(self, policy, saved):
        super().__init__()
        self.policy, self.saved, self.k = policy, saved, 0

    def process(self, prim, args, kwargs):
        if prim.nondiff:
            return pass_through(self, prim, args, kwargs)
        vals, parents = self._unbox(args)
        if not self.policy(prim, *vals, **kwargs):
            return super().process(prim, args, kwargs)
        ans = self.saved[self.k]
        self.k += 1
        return self.record(prim, ans, vals, kwargs, parents)


def tape_residuals(trace):
    """The distinct arrays `trace`'s tape keeps for its backward pass, each with where it
    comes from: [(array, "output of <primitive>" | "input of <primitive>" | "saved by
    checkpoint <name>")], in tape order (each entry's results, inputs, checkpoint saves)."""
    seen, found = set(), []

    def add(x, where):
        if isinstance(x, (tuple, list)):
            for y in x:
                add(y, where)
        elif hasattr(x, "nbytes") and not isinstance(x, Tracer) and id(x) not in seen:
            seen.add(id(x))
            found.append((x, where))

    for e in trace.tape:
        if e is None or e[0] is _PROJ:
            continue
        name = getattr(e[0], "name", "?")
        add(e[1], f"output of {name}")
        add(e[2], f"input of {name}")
        add(getattr(e[0], "residuals", ()), f"saved by checkpoint {name}")
    return found


def tape_bytes(trace):
    """The bytes of the distinct arrays `trace`'s tape keeps for its backward pass (the
    residuals): each entry's inputs and results, and what checkpoint nodes keep."""
    return sum(int(x.nbytes) for x, _ in tape_residuals(trace))


def _real_if_real(c, x):
    """A complex cotangent for a real input `x` is its real part (JAX's convention: the
    transpose of promoting a real value to complex takes the real part)."""
    dt = getattr(c, "dtype", None)
    if dt is not None and dt.kind == "c" and x.dtype.kind != "c":
        return c.real
    return c


def backward(tape, seeds, consume=False, lines=None):
    """Run the tape backwards from `seeds` [(idx, cotangent)]; returns the grads list.

    With `consume`, each entry is dropped once passed, so that the forward values it holds
    are freed during the backward pass (lower peak memory; the tape cannot be run again).
    `lines` (debug_nans): the source line of each entry, named while its rule runs.
    """
    if lines is None:
        return _backward(tape, seeds, consume, None)
    outer = BACKWARD_NODE[0]
    try:
        return _backward(tape, seeds, consume, lines)
    except FloatingPointError as e:  # NumPy's check in a rule: name the node it belongs to
        if str(e).startswith("debug_") or BACKWARD_NODE[0] is None:
            raise
        name, line = BACKWARD_NODE[0]
        at = f", whose forward call was at {line}" if line else ""
        raise FloatingPointError(f"debug_nans/debug_infs: {e} in the backward pass: the VJP "
                                 f"of '{name}'{at}.") from e
    finally:
        BACKWARD_NODE[0] = outer


def _backward(tape, seeds, consume, lines):
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
        if lines is not None and prim is not _PROJ:
            BACKWARD_NODE[0] = (prim.name, lines.get(idx))
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
        else:
            vjps = prim.vjps
            for i, p in parents:
                rule = vjps.get(i)
                if rule is None:
                    raise prim.missing("vjp", i)
                c = _real_if_real(rule(g, ans, *vals, **kwargs), vals[i])
                old = grads[p]
                grads[p] = c if old is None else old + c
        if lines is not None:
            _check_cotangents(grads, parents)
    return grads


def _check_cotangents(grads, parents):
    """debug_nans/debug_infs: the cotangents a node's rule just made hold no NaN (inf)."""
    for _, p in parents:
        kind = VALUE_CHECK[0](grads[p])
        if kind is not None:
            name, line = BACKWARD_NODE[0]
            at = f", whose forward call was at {line}" if line else ""
            switch = "debug_nans" if kind == "nan" else "debug_infs"
            raise FloatingPointError(
                f"{switch}: invalid value ({kind}) produced in the backward pass by the VJP of "
                f"'{name}'{at}. Turn the check off with fnad.config.update('{switch}', False) "
                "once found.")


def trace_reverse(call, flat, traced, in_tree, name, trace=None):
    """Run `call(tree)` on the pytree `in_tree` of `flat`, the leaves at positions `traced`
    boxed in a new RevTrace (or in `trace`); returns (trace, boxed leaves, output). The trace
    is finished (its tracers escape as errors) when `call` returns."""
    trace = RevTrace() if trace is None else trace
    boxed = list(flat)
    for i in traced:
        boxed[i] = trace.new_input(flat[i])
    try:
        out = call(tree_unflatten(in_tree, boxed))
    finally:
        finish_trace(trace, name)
    return trace, boxed, out


def pull_back(trace, out_flat, cts, consume=False):
    """Run `trace`'s tape backwards from cotangents `cts` of its outputs `out_flat` (None for
    none); returns the cotangent list indexed like the tape (an input's at its `_idx`)."""
    seeds = [(o._idx, c) for o, c in zip(out_flat, cts)
             if c is not None and isinstance(o, RevTracer) and o._trace is trace]
    return backward(trace.tape, seeds, consume=consume, lines=trace.lines)


def custom_jvp_cotangents(rule, args, in_tree, vals, g):
    """The cotangents of the differentiable leaves `vals` of a custom_jvp call from its
    outputs' cotangents `g` (one per output leaf): the jvp rule's tangent output, a linear
    function of the tangents, pulled back from tangents of zero (None for integer leaves)."""
    zeros = [zeros_like_value(v) for v in vals]
    traced = [i for i, v in enumerate(vals) if shape_dtype(v)[1].kind in "fc"]

    def tangent_out(tans):
        return tree_flatten(rule.jvp_leaves(args, in_tree, vals, tans)[1])[0]

    trace, boxed, t_out = trace_reverse(tangent_out, zeros, traced,
                                        tree_flatten(zeros)[1], f"custom_jvp {rule.name}")
    grads = pull_back(trace, t_out, list(g), consume=True)
    cts = [None] * len(vals)
    for i in traced:
        c = grads[boxed[i]._idx]
        cts[i] = zeros[i] if c is None else fit_cotangent(c, vals[i])
    return cts


def rule_cotangents(rule, fixed, res, g, in_tree, vals):
    """The leaves' cotangents from `rule.bwd(*fixed, res, g)`, zeros where it gives None,
    each checked to have its input's shape."""
    out = []
    for i, (c, v) in enumerate(zip(rule.leaf_cotangents(rule.bwd(*fixed, res, g), in_tree),
                                   vals)):
        if c is None:
            out.append(zeros_like_value(v))
            continue
        c_shape, v_shape = shape_dtype(c)[0], shape_dtype(v)[0]
        if c_shape != v_shape:
            raise ValueError(f"custom_vjp {rule.name}: bwd returned a cotangent of shape "
                             f"{c_shape} for input leaf {i} of shape {v_shape}; each cotangent "
                             "must have its input's shape (broadcastable is not enough).")
        out.append(c)
    return out
