"""The program representation of a staged function: `Var`, `Eqn` and `Program`.

A graph is a list of equations in order of execution. Each equation applies one primitive
to atoms (a `Var`, or a constant: an array, a Python scalar, a shape, an axis) and binds
its results to fresh `Var`s. Every `Var` is assigned exactly once. The graph's inputs are
`invars` (the flattened arguments, then the captured outer tracers) and its outputs are
`outvars` (Vars or constants). Printing gives a jaxpr-like text:

    { lambda ; a:f64[3] . let
        b:f64[3] = tanh a
        c:f64[3] = power b 2
        d:f64[] = sum[axis=None] c
      in (d) }
"""

import itertools

import numpy as np

from .._core.abstract import aval_of
from .._core.tracer import Tracer, bind_traced
from .._core.tree import tree_flatten, tree_unflatten

__all__ = ["Var", "Eqn", "Program", "map_atoms", "rebuild", "substitute", "is_array_const",
           "read_counts", "flat_args", "any_tracer", "np_summary"]

_ids = itertools.count()


class Var:
    """A value of the program: its abstract value; compared by identity."""

    __slots__ = ("aval", "count")

    def __init__(self, aval):
        self.aval = aval
        self.count = next(_ids)

    def __repr__(self):
        return f"Var({self.count}:{self.aval})"


class Eqn:
    """`outvars = prim(*args, **kwargs)`, with Vars among `args` (possibly in lists)."""

    __slots__ = ("prim", "args", "kwargs", "outvars", "scope")

    def __init__(self, prim, args, kwargs, outvars, scope=()):
        self.prim = prim
        self.args = args
        self.kwargs = kwargs
        self.outvars = outvars
        self.scope = scope

    def invars(self):
        """The Vars among the arguments, in order (repeats kept)."""
        out = []
        for a in self.args:
            if type(a) is Var:
                out.append(a)
            elif type(a) in (list, tuple):
                out.extend(v for v in a if type(v) is Var)
        return out

    def __repr__(self):
        return f"Eqn({self.prim.name}, {len(self.args)} args -> {len(self.outvars)})"


def map_atoms(args, f):
    """`args` with every Var `v` replaced by `f(v)` (lists and tuples looked into)."""
    out = []
    for a in args:
        if type(a) is Var:
            a = f(a)
        elif type(a) in (list, tuple) and any(type(v) is Var for v in a):
            a = type(a)(f(v) if type(v) is Var else v for v in a)
        out.append(a)
    return out


def rebuild(program, eqns, outvars=None, note=None):
    """A copy of `program` (a Graph) with other equations (and outputs), for a pass that
    rewrites it: the same inputs, structures, captured tracers and example inputs; `note` is
    added to its notes. Control-flow fields (`lifted`, `stacks_carries`) are not carried."""
    g = type(program)(program.invars, eqns, program.outvars if outvars is None else outvars,
                      program.in_tree, program.out_tree, program.captured, program.name)
    g.example_inputs = program.example_inputs
    g.notes = list(program.notes) + ([note] if note else [])
    return g


def substitute(eqns, outvars, mapping):
    """Equations and outputs with Vars replaced as `mapping` says (chains followed)."""
    def sub(v):
        while v in mapping:
            v = mapping[v]
        return v

    def sub_atom(a):
        return sub(a) if type(a) is Var else a

    new = [Eqn(e.prim, tuple(map_atoms(e.args, sub)), e.kwargs, e.outvars, e.scope)
           for e in eqns]
    return new, [sub_atom(v) for v in outvars]


def read_counts(program, output_reads=1):
    """{Var: how many times `program`'s equations read it, plus `output_reads` each time it
    is one of the outputs (2 keeps an output from ever counting as read once)."""
    n = {}
    for e in program.eqns:
        for v in e.invars():
            n[v] = n.get(v, 0) + 1
    for v in program.outvars:
        if type(v) is Var:
            n[v] = n.get(v, 0) + output_reads
    return n


def is_array_const(x):
    # a class is never one: np.float32 (a dtype argument) has `shape` and `dtype` descriptors
    return hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (Tracer, type))


class Program:
    """A staged function: inputs, equations, outputs and the pytree structures around them
    (`fnad/_graph/graph.py`'s `Graph` adds its views: text, memory plan, pictures).

    `program(*args, **kwargs)` runs it (on arrays: each primitive's implementation; on
    tracers of other transforms: each primitive bound, so grad/jvp/vmap see the same
    operations).

    Fields besides the program itself: `captured` [(Var, outer tracer)], inputs after
    `invars`; `lifted` (start, count): the inputs of a control-flow body that are constants
    lifted out of it (never traced, no cotangent); `stacks_carries`: a scan body that also
    outputs the carry each step starts from; `derived`: what the control-flow rules derive
    from a body (its JVP and VJP programs, its compiled runner), made once; `example_inputs`:
    the inputs it was made with, for `values()` and pictures; `notes`: what each optimisation
    pass did.
    """

    def __init__(self, invars, eqns, outvars, in_tree, out_tree, captured=(), name="function",
                 lifted=(0, 0), stacks_carries=False):
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.captured = list(captured)
        self.name = name
        self.lifted = lifted
        self.stacks_carries = stacks_carries
        self.derived = {}
        self.example_inputs = None
        self.notes = []

    # -------------------------------------------------------------------- running
    def run_flat(self, flat):
        """Evaluate on flat inputs (the captured tracers are appended)."""
        env = dict(zip(self.invars, flat))
        for var, t in self.captured:
            env[var] = t
        return [env[v] if type(v) is Var else v for v in self._run(env)]

    def _run(self, env):
        read = env.__getitem__
        for eqn in self.eqns:
            args = map_atoms(eqn.args, read)
            prim = eqn.prim
            if any_tracer(args):
                out = bind_traced(prim, args, eqn.kwargs)
            else:
                out = prim.impl(*args, **eqn.kwargs)
            if len(eqn.outvars) == 1 and not prim.multiple_results:
                env[eqn.outvars[0]] = out
            else:
                for v, o in zip(eqn.outvars, out):
                    env[v] = o
        return [env[v] if type(v) is Var else v for v in self.outvars]

    def __call__(self, *args, **kwargs):
        flat, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(f"graph {self.name}: called with structure {tree}, traced with "
                            f"{self.in_tree}.")
        for i, (x, v) in enumerate(zip(flat, self.invars)):
            a = aval_of(x)
            if a.shape != v.aval.shape or a.dtype != v.aval.dtype:
                raise TypeError(f"graph {self.name}: input leaf {i} is {a}, the graph was traced "
                                f"for {v.aval}; trace it again for the new shape or dtype.")
        return tree_unflatten(self.out_tree, self.run_flat(flat))

    def values(self, *args, **kwargs):
        """Every Var's value at these inputs (default: the inputs it was made with)."""
        if args or kwargs:
            flat = tree_flatten((args, kwargs))[0]
        elif self.example_inputs is not None:
            flat = self.example_inputs
        else:
            raise ValueError(f"graph {self.name}: no inputs to compute values from; pass them.")
        env = dict(zip(self.invars, flat))
        for var, t in self.captured:
            env[var] = t
        self._run(env)
        return env

    # -------------------------------------------------------------------- inspection
    def consts(self):
        """The array constants among the equations' arguments and outputs, in order."""
        seen, out = set(), []
        for a in itertools.chain((x for e in self.eqns for x in flat_args(e.args)),
                                 self.outvars):
            if is_array_const(a) and getattr(a, "ndim", 0) > 0 and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
        return out

    def primitive_counts(self):
        """{primitive name: number of equations applying it}."""
        counts = {}
        for e in self.eqns:
            counts[e.prim.name] = counts.get(e.prim.name, 0) + 1
        return counts


def flat_args(args):
    for a in args:
        if type(a) in (list, tuple):
            yield from a
        else:
            yield a


def any_tracer(args):
    for a in args:
        if isinstance(a, Tracer):
            return True
        if type(a) in (list, tuple):
            for v in a:
                if isinstance(v, Tracer):
                    return True
    return False


def np_summary(x):
    """A short text summary of an array value: mean, std, min, max (or the value)."""
    v = np.asarray(x.get() if hasattr(x, "get") else x)
    if v.size == 1:
        return f"{v.reshape(()).item():.4g}" if v.dtype.kind in "fc" else str(v.reshape(()))
    if v.dtype.kind not in "fciub" or v.size == 0:
        return f"{v.dtype}{list(v.shape)}"
    w = v.astype(np.float64) if v.dtype.kind != "c" else np.abs(v)
    return f"mean {w.mean():.3g} std {w.std():.3g} [{w.min():.3g}, {w.max():.3g}]"
