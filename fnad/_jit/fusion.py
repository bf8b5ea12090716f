"""Fusion of elementwise equations into one kernel: `fuse_elementwise(graph)`.

A cluster is a set of elementwise equations (single-output ufuncs without a signature,
`where`, `astype`) on NumPy arrays whose results all have one shape, connected through
their values, such that no equation outside the cluster reads a cluster value before the
cluster is complete (so the fused equation, put where the cluster's last equation was,
breaks no data dependence). Its values that are read outside it (or are graph outputs)
become the outputs of one `fused_elementwise` equation; the others never exist in memory.

The kernel is built by a backend (`set_backend`, env FNAD_FUSION):
  - "numba":   one compiled loop (fnad/_jit/kernels.py), every output in the same pass;
               arithmetic, comparisons, where and casts (transcendentals stay NumPy's SIMD
               loops); large ones split over fnad's thread pool (kernels.SPLIT_MIN);
               cached on disk.
  - "numexpr": one numexpr program per output, blocked and multi-threaded.
  - "numpy":   the pure-NumPy fallback: the equations in order, results written into
               dying temporaries (`out=`); bit-identical to the unfused program.
  - "off":     no fusion.
Every value keeps NumPy's dtype: each operation is computed in the loop dtypes NumPy's own
type resolution picks (`ufunc.resolve_dtypes`, Python scalars weakly typed), with explicit
casts. +, -, *, /, sqrt, comparisons, where and casts give the same bits as NumPy (so
numba kernels are bit-identical); numexpr's transcendental functions (exp, tanh, ...) come
from its own math library and may differ from NumPy's in the last bits. CuPy graphs are
left unfused. Under fast math (`fuse_elementwise(graph, fast_math=True)`, numba) exp, tanh,
log, erf and expit join the kernels as approximations within docs/jit.md's bounds, and
negations join them too.
"""

import numpy as np

from .._core.abstract import ShapedArray
from .._core.settings import setting
from .._core.tracer import Primitive
from .._graph.graph import Graph
from .._graph.ir import Eqn, Var, rebuild
from .compile import compile_graph
from .kernels import FAST_OPS, build, negates, power_exponent, supports

__all__ = ["fuse_elementwise", "fused_elementwise", "FusedKernel", "set_backend",
           "get_backend", "available_backends", "Step", "MIN_SIZE"]

# Clusters whose results have fewer elements stay unfused: a kernel saves little there and
# costs a compile (numba: about a second, once per kernel source, then cached on disk).
MIN_SIZE = 1024

FUSABLE_DTYPES = frozenset(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"))


# --------------------------------------------------------------------------- backends
_backend = None  # chosen on first use: FNAD_FUSION, else the first importable of _ORDER
_ORDER = ("numba", "numexpr", "numpy")


def _importable(name):
    if name in ("numpy", "off"):
        return True
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def available_backends():
    """The fusion backends that can be used here, fastest first."""
    return [b for b in _ORDER if _importable(b)]


def set_backend(name):
    """Choose the fusion backend for later traces: "numba", "numexpr", "numpy" or "off"."""
    global _backend
    if name not in _ORDER + ("off",):
        raise ValueError(f"set_backend: unknown fusion backend {name!r}; choose one of "
                         f"{_ORDER + ('off',)}.")
    if not _importable(name):
        raise ImportError(f"set_backend: fusion backend {name!r} is not installed; "
                          "pip install 'fnad[speed]', or choose 'numpy'.")
    _backend = name


def get_backend():
    """The fusion backend in use (FNAD_FUSION, else the fastest importable one)."""
    global _backend
    if _backend is None:
        name = setting("FNAD_FUSION")
        if name:
            set_backend(name)
        else:
            _backend = available_backends()[0]
    return _backend


# --------------------------------------------------------------------------- the program
class Step:
    """One elementwise operation of a kernel: `op(*operands)` computed in `loop` dtypes.

    op: a ufunc name, "where" or "astype". operands: ("x", k) kernel input k, ("t", j)
    the result of step j, ("s", value) a Python scalar. loop: the dtype each operand is cast
    to; out: the result's dtype. eqn: the equation it came from (for the NumPy fallback).
    """

    __slots__ = ("op", "operands", "loop", "out", "eqn")

    def __init__(self, op, operands, loop, out, eqn):
        self.op, self.operands, self.loop, self.out, self.eqn = op, operands, loop, out, eqn


def _operand_dtype(a):
    if type(a) is Var:
        return a.aval.dtype
    if type(a) in (bool, int, float):
        return type(a)
    return np.asarray(a).dtype


def _step_types(e, fast=False):
    """(op, loop dtypes, out dtype) of an elementwise equation, or None if not one (`fast`:
    fnad.scipy.special's erf and expit on floats are elementwise steps too)."""
    prim, args, out = e.prim, e.args, e.outvars[0].aval
    impl = prim.impl
    if (fast and prim.name in ("erf", "expit") and prim.name in FAST_OPS and len(args) == 1
            and not e.kwargs and type(args[0]) is Var and args[0].aval.dtype == out.dtype
            and out.dtype.kind == "f"):
        return prim.name, (out.dtype,), out.dtype
    if isinstance(impl, np.ufunc):
        if impl.signature is not None or impl.nout != 1 or e.kwargs or len(args) != impl.nin:
            return None
        try:
            types = impl.resolve_dtypes(tuple(_operand_dtype(a) for a in args) + (None,))
        except (TypeError, ValueError, OverflowError):
            return None
        if types[-1] != out.dtype:
            return None
        return impl.__name__, types[:-1], out.dtype
    if prim.name == "where" and impl is np.where and len(args) == 3 and not e.kwargs:
        if _operand_dtype(args[0]) != np.dtype(bool):
            return None
        return "where", (np.dtype(bool), out.dtype, out.dtype), out.dtype
    if prim.name == "astype" and len(args) == 2 and not e.kwargs and type(args[0]) is Var:
        return "astype", (args[0].aval.dtype,), out.dtype
    return None


def _elementwise(e, min_size=None, fast=False):
    """The step types if `e` may join a cluster (NumPy arrays, supported dtypes, at least
    `min_size` elements: default MIN_SIZE; `fast`: fast math's steps too)."""
    if len(e.outvars) != 1 or e.prim.multiple_results:
        return None
    out = e.outvars[0].aval
    if (out.ndim == 0 or out.size < (MIN_SIZE if min_size is None else min_size)
            or out.weak_type or out.xp is not np or out.dtype not in FUSABLE_DTYPES):
        return None
    args = e.args if e.prim.name != "astype" else e.args[:1]
    for a in args:
        if type(a) is Var:
            v = a.aval
            if (v.weak_type or v.xp is not np or v.dtype not in FUSABLE_DTYPES
                    or v.ndim > out.ndim):
                return None
        elif type(a) in (bool, int, float):
            continue
        elif type(a) is np.ndarray or isinstance(a, np.generic):
            if a.dtype not in FUSABLE_DTYPES or a.ndim > out.ndim:
                return None
        else:
            return None
    types = _step_types(e, fast)
    if types is None:
        return None
    if any(t not in FUSABLE_DTYPES for t in types[1]):
        return None
    return types


# --------------------------------------------------------------------------- the kernel
class FusedKernel:
    """A fused cluster: `kernel(*inputs) -> tuple of outputs`, built by a backend."""

    def __init__(self, steps, in_avals, outs, shape, backend, fast=False):
        self.fast = fast  # fast math: its transcendental steps are approximations
        self.fallback = None  # why the backend's kernel was replaced by NumPy's, if it was
        self.steps = steps
        self.in_avals = in_avals
        self.outs = outs  # step index of each output
        self.shape = shape
        self.out_avals = [ShapedArray(shape, steps[j].out) for j in outs]
        self.backend = backend
        self.name = (f"fused_{backend}{'_fast' if fast else ''}"
                     f"[{','.join(_short(s.op) for s in steps)}]")
        self.__name__ = self.name
        self.run = None
        self.takes_out = backend == "numba"  # run(*xs, out=(buffer or None, ...))

    def build(self, graph_in, graph_out):
        """Make `run`; on numba/numexpr, a kernel the library fails to build or compile
        falls back to the NumPy program of the same equations (reason in `fallback`)."""

        def numpy_run():
            sub = Graph(graph_in, [s.eqn for s in self.steps], graph_out, None, None,
                        name=self.name)
            run = compile_graph(sub)
            return lambda *xs, out=None: tuple(run(*xs))

        if self.backend == "numpy":
            self.run = numpy_run()
            return self
        try:
            self.run = build(self, numpy_run)
        except Exception as e:  # any library failure: keep NumPy's program
            self.fallback = f"{type(e).__name__}: {e}"
            self.run = numpy_run()
        return self

    def __call__(self, *xs, out=None):
        return self.run(*xs) if out is None else self.run(*xs, out=out)

    def __repr__(self):
        return self.name


_SHORT = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "negative": "neg"}


def _short(op):
    return _SHORT.get(op, op)


def _fused_impl(*xs, kernel, out=None):
    return kernel(*xs, out=out)


def _fused_aval(*avals, kernel):
    return list(kernel.out_avals)


fused_elementwise = Primitive("fused_elementwise", _fused_impl, multiple_results=True)
fused_elementwise.abstract_eval = _fused_aval


# --------------------------------------------------------------------------- clusters
def _clusters(graph, accept, alone=None):
    """Lists of equation indices, each a cluster of two or more fusable equations, or of one
    equation `alone(eqn)` wants as a kernel of its own."""
    member = {}  # Var -> cluster id
    clusters = {}  # id -> [equation indices]
    shape_of, sealed = {}, set()
    for j, e in enumerate(graph.eqns):
        ins = e.invars()
        ok = accept(e)
        shape = e.outvars[0].aval.shape if ok else None
        joined = set()
        for v in ins:
            c = member.get(v)
            if c is None:
                continue
            if ok and c not in sealed and shape_of[c] == shape:
                joined.add(c)
            else:
                sealed.add(c)  # read outside: the cluster is complete
        if not ok:
            continue
        cid = min(joined) if joined else j
        if not joined:
            clusters[cid], shape_of[cid] = [], shape
        for c in joined - {cid}:
            clusters[cid] += clusters.pop(c)
            for v, m in member.items():
                if m == c:
                    member[v] = cid
        clusters[cid].append(j)
        member[e.outvars[0]] = cid
    return [sorted(c) for c in clusters.values()
            if len(c) > 1 or (alone is not None and alone(graph.eqns[c[0]]))]


def _make_kernel(graph, idx, types, used_outside, backend, fast=False):
    eqns = [graph.eqns[j] for j in idx]
    step_of = {e.outvars[0]: k for k, e in enumerate(eqns)}
    inputs, in_index = [], {}
    steps = []
    for e in eqns:
        op, loop, out = types[id(e)]
        operands = []
        for a in (e.args if op != "astype" else e.args[:1]):
            if type(a) is Var and a in step_of:
                operands.append(("t", step_of[a]))
            elif type(a) in (bool, int, float):
                operands.append(("s", a))
            else:
                key = a if type(a) is Var else id(a)
                if key not in in_index:
                    in_index[key] = len(inputs)
                    inputs.append(a)
                operands.append(("x", in_index[key]))
        steps.append(Step(op, operands, loop, out, e))
    outs = [k for k, e in enumerate(eqns) if e.outvars[0] in used_outside]
    shape = eqns[-1].outvars[0].aval.shape
    in_avals = [a.aval if type(a) is Var else ShapedArray(np.shape(a), np.asarray(a).dtype)
                for a in inputs]
    kernel = FusedKernel(steps, in_avals, outs, shape, backend,
                         fast and any(s.op in FAST_OPS for s in steps))
    graph_in = [a if type(a) is Var else Var(av) for a, av in zip(inputs, in_avals)]
    # the NumPy program of the steps (backend or fallback) reads constants through Vars
    remap = {id(a): v for a, v in zip(inputs, graph_in) if type(a) is not Var}
    if remap:
        for s in steps:
            s.eqn = Eqn(s.eqn.prim, tuple(remap.get(id(a), a) if type(a) is not Var else a
                                          for a in s.eqn.args), s.eqn.kwargs, s.eqn.outvars)
    kernel.build(graph_in, [eqns[k].outvars[0] for k in outs])
    outvars = [eqns[k].outvars[0] for k in outs]
    return Eqn(fused_elementwise, tuple(inputs), {"kernel": kernel}, outvars)


def fuse_elementwise(graph, backend=None, fast_math=False):
    """`graph` with each cluster of elementwise equations replaced by one fused equation.
    `fast_math` (numba): exp, tanh, log, erf and expit join the kernels as vectorised
    approximations (fnad/_jit/fastmath.py), and negations join them too (their NaN signs
    may then differ from NumPy's)."""
    backend = backend or get_backend()
    if backend == "off" or not graph.eqns:
        return graph
    fast = fast_math and backend == "numba"
    supports = _supports(backend, fast)
    types = {}

    def accept(e):
        t = _elementwise(e, fast=fast)
        if t is None or not supports(e, *t):
            return False
        types[id(e)] = t
        return True

    # fast math's x ** 3 and x ** 4 beat NumPy's power (a scalar loop for negative bases)
    # even as one-step kernels; a lone transcendental does not beat NumPy's SIMD loop
    alone = (lambda e: types[id(e)][0] == "power") if fast else None
    clusters = _clusters(graph, accept, alone)
    if not clusters:
        return graph
    eqns, done = replace_groups(
        graph, clusters, lambda idx, used: _make_kernel(graph, idx, types, used, backend,
                                                        fast))
    if not done:
        return graph
    fused_eqns = sum(len(idx) for idx in done)
    note = (f"fusion ({backend}{', fast math' if fast else ''}): {fused_eqns} elementwise "
            f"equations into {len(done)} kernels")
    return rebuild(graph, eqns, note=note)


def replace_groups(graph, groups, make):
    """`graph`'s equations with each group (sorted equation indices) replaced by one
    equation `make(idx, used)`, put where its last equation was; `used`: the group's values
    read outside it or returned. A group none of whose values is used (dead code, its pass
    switched off) is left as it is. Returns (equations, the groups replaced)."""
    readers = {}
    for j, e in enumerate(graph.eqns):
        for v in e.invars():
            readers.setdefault(v, set()).add(j)
    outs = {v for v in graph.outvars if type(v) is Var}
    replace, drop, done = {}, set(), []
    for idx in groups:
        inside = set(idx)
        used = [v for j in idx for v in graph.eqns[j].outvars
                if v in outs or readers.get(v, set()) - inside]
        if not used:
            continue
        replace[idx[-1]] = make(idx, used)
        drop.update(idx[:-1])
        done.append(idx)
    return [replace.get(j, e) for j, e in enumerate(graph.eqns) if j not in drop], done


def _supports(backend, fast=False):
    if backend == "numpy":
        return lambda e, op, loop, out: True

    def check(e, op, loop, out):
        args = e.args if op != "astype" else e.args[:1]
        if backend == "numba" and not fast and negates(op, args, out):
            return False
        if backend == "numba" and op == "power":
            return power_exponent(args, out, fast) is not None
        return supports(backend, op, [_operand_dtype(a) for a in args], loop, out, fast)
    return check
