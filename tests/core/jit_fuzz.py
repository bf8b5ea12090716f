"""A program fuzzer for fnad.jit and fnad.vmap: random programs, checked bit for bit.

A program is Python source: statements `vK = <expression>` over its inputs (`x0`, `x1`
floats, `i0` an int64 array, `key` a PRNG key) and closed-over constants (`c0`, ...), drawn
from op families (elementwise, views, chains that invite buffer reuse, reductions,
comparisons, casts, integers, products, random draws, scans, slices that tile an axis).
Each statement is run on example inputs as it is drawn, so shapes and dtypes come from
NumPy itself and a statement that fails is simply drawn again. Each program is then
checked on each fusion backend:

  jit        jit(f) == f, also on a second call (the cache), after the caller scribbles on
             what the first call returned, and never sharing memory with an input where f
             does not; and again after the closed-over constants change (they are constants
             of the trace)
  jit(grad)  jit(grad(loss)) == grad(loss), loss a weighted sum of f's float outputs
  grad(jit)  grad(jit(loss)) == grad(loss)
  vmap(jit)  vmap(jit(f)) == vmap(f);  jit(vmap)  jit(vmap(f)) == vmap(f)

and `jit` again with each optimisation of `fnad.jit(f, optimize=...)` switched off. Programs of
the `fast_math` family (smooth: exp, tanh, log, erf, expit, softmax rows; drawn only when
asked for) go through `jit(fast)` and `jit(grad, fast)` (`fuzz_fast_math`): fnad.jit(...,
fast_math=True) against eager within FAST_TOLERANCE (docs/jit.md, "Fast math"). Every
jit unrolls the scans drawn (`unroll=UNROLL`), so the unroll pass is checked too.
"Equal" is bit for bit (dtype, shape, every bit of every element; NaN where NaN, but not
the NaN's sign, which IEEE 754 leaves open when an operation meets two NaNs of different
signs: NumPy's own SIMD and scalar loops pick differently, docs/jit.md), except where
docs/jit.md states a tolerance: a program with numexpr's transcendental functions on the
numexpr backend is compared normwise to 100 times their stated tolerance (float32 2e-6,
float64 1e-13; float32's for every output of a program with float32 values, whose error a
cast to float64 keeps), for what the later operations make of a last-bit difference. (tests/core/
test_jit_trust.py checks NaN signs through fused negations, item 6 of issue 20.)

A failure shrinks the program (outputs dropped, statements bypassed) while it still fails
and raises `FuzzFailure`, whose message is a runnable reproduction: the program as source.

Extending it: a new op family is a function `family(draw)` that emits
statements through `draw.emit(expr, *operands)`, registered with one line in `FAMILIES`;
a new backend is one name in `BACKENDS`.
"""

import contextlib
import functools
import re
import warnings

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad import lax
from fnad._jit import fusion as gf
from fnad._jit import kernels as gk
from fnad._jit.jit import PASSES
from fnad.scipy import special as fsp
import fnad_nn as nn
from fnad_nn import _fused as nnf

__all__ = ["FAMILIES", "BACKENDS", "CHECKS", "FAST_CHECKS", "Program", "generate",
           "check_program", "fuzz", "fuzz_fast_math", "fuzz_loops", "FuzzFailure"]

BACKENDS = [b for b in ("numba", "numexpr", "numpy") if gf._importable(b)]
# docs/jit.md: numexpr's transcendentals agree with NumPy to these, relative
TOLERANCE = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-13}
# numexpr's functions that are not IEEE-exact (all it computes but sqrt and abs)
TRANSCENDENTAL = tuple(f for f in gk._NE_FUNC if f not in ("sqrt", "absolute"))
UNROLL = 4000  # fnad.jit(f, unroll=UNROLL): the drawn scans are unrolled (the pass is on)
SCALARS = ("2.0", "0.5", "-1.0", "-1", "3", "-0.0", "0.0", "1.5")


class FuzzFailure(AssertionError):
    """A program on which jit or vmap differs from eager; the message reproduces it."""


# --------------------------------------------------------------------------- programs
class Stmt:
    __slots__ = ("name", "expr", "deps", "shape", "dtype")

    def __init__(self, name, expr, deps, shape, dtype):
        self.name, self.expr, self.deps = name, expr, deps
        self.shape, self.dtype = shape, dtype


# what jit(grad), grad(jit) differentiate: a weighted sum of f's float outputs
LOSS_SOURCE = """def loss(x0, x1, i0, key):
    total = 0.0
    for k, o in enumerate(f(x0, x1, i0, key)):
        if np.dtype(o.dtype).kind == "f":
            total = total + fnp.sum(o * (1.0 + 0.25 * k))
    return total * 1.0
"""


class Program:
    """Inputs and constants (as code), statements, outputs; `source()` is the function."""

    def __init__(self, seed, setup, consts, stmts, outputs):
        self.seed, self.setup, self.consts = seed, setup, consts
        self.stmts, self.outputs = stmts, outputs

    def source(self):
        lines = ["def f(x0, x1, i0, key):"]
        lines += [f"    {s.name} = {s.expr}" for s in self.stmts]
        lines.append(f"    return ({''.join(o + ', ' for o in self.outputs)})")
        return "\n".join(lines) + "\n"

    def inputs_source(self):
        return "\n".join([f"rng = np.random.default_rng({self.seed})"] + self.setup
                         + [f"{n} = {code}" for n, code in self.consts]) + "\n"

    def namespace(self):
        ns = {"np": np, "fnp": fnp, "fnad": fnad, "lax": lax, "nn": nn, "nnf": nnf, "fsp": fsp,
              "functools": functools}
        exec(self.inputs_source(), ns)  # the fuzzer's own code
        exec(self.source() + LOSS_SOURCE, ns)
        return ns

    def args(self, ns):
        return ns["x0"], ns["x1"], ns["i0"], ns["key"]

    def transcendental(self):
        return any(re.search(rf"\bfnp\.{t}\(", s.expr) for s in self.stmts
                   for t in TRANSCENDENTAL)

    def copy(self, stmts=None, outputs=None):
        return Program(self.seed, self.setup, self.consts,
                       list(self.stmts if stmts is None else stmts),
                       list(self.outputs if outputs is None else outputs))


class Draw:
    """The state of one program being drawn: values with their example numbers."""

    def __init__(self, rng, ns):
        self.rng, self.ns = rng, ns
        self.stmts, self.consts = [], []
        self.values = {n: ns[n] for n in ("x0", "x1", "i0")}

    def pick(self, kind="float", ndim_min=0, exclude=()):
        """A value's name of a kind ("float", "int", "bool", "any"), or None."""
        names = [n for n, v in self.values.items() if n not in exclude and np.ndim(v) >=
                 ndim_min and (kind == "any" or _kind(v) == kind)]
        if not names:
            return None
        recent = names[-4:]  # favour recent values: longer dependence chains
        pool = recent if self.rng.random() < 0.6 else names
        return pool[self.rng.integers(len(pool))]

    def const(self, shape, dtype="float64"):
        """A closed-over constant array of `shape`; returns its name."""
        name = f"c{len(self.consts)}"
        code = (f"np.random.default_rng({int(self.rng.integers(1 << 30))})."
                f"standard_normal({tuple(shape)!r}).astype(np.{dtype})")
        self.ns[name] = eval(code, {"np": np})  # the fuzzer's own code
        self.consts.append((name, code))
        return name

    def scalar(self):
        return SCALARS[self.rng.integers(len(SCALARS))]

    def emit(self, expr, *deps):
        """Run `vK = expr` on the example values; keep it when it runs, returning its name
        (None when it raised: the family may try something else)."""
        name = f"v{len(self.stmts)}"
        env = dict(self.ns)
        env.update(self.values)
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("error")
                value = eval(expr, env)  # the fuzzer's own code
        except Exception:  # an invalid draw (shapes, dtypes): draw again
            return None
        if not hasattr(value, "shape") or not hasattr(value, "dtype"):
            return None
        self.values[name] = value
        self.stmts.append(Stmt(name, expr, list(deps), value.shape, value.dtype))
        return name

    def choice(self, options):
        return options[self.rng.integers(len(options))]


def _kind(v):
    k = np.asarray(v).dtype.kind
    return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(k, "other")


# --------------------------------------------------------------------------- op families
UNARY = ("fnp.exp(-fnp.abs({a}))", "fnp.tanh({a})", "fnp.sin({a})", "fnp.log1p(fnp.abs({a}))",
         "fnp.sqrt(fnp.abs({a}))", "-{a}", "fnp.abs({a})", "fnp.square({a})", "{a} * {a}",
         "fnp.reciprocal({a})", "fnp.floor({a})", "fnp.sign({a})", "fnp.negative({a} * 1.5)",
         "fnp.copysign(1.0, {a})", "fnp.maximum({a}, 0.0)", "fnp.sqrt({a})", "{a} ** 2",
         "{a} ** 3", "fnp.power({a}, 4)")
BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "fnp.maximum({a}, {b})",
          "fnp.minimum({a}, {b})", "fnp.where({a} > {b}, {a}, {b})", "fnp.copysign({a}, {b})",
          "fnp.arctan2({a}, {b})", "fnp.hypot({a}, {b})")


def elementwise(d):
    a = d.pick()
    if a is None:
        return
    if d.rng.random() < 0.45:
        d.emit(d.choice(UNARY).format(a=a), a)
        return
    r = d.rng.random()
    if r < 0.3:
        b, deps = d.scalar(), (a,)
    elif r < 0.5:
        shape = np.shape(d.values[a])
        b, deps = d.const(shape[d.rng.integers(len(shape) + 1):], d.values[a].dtype.name), (a,)
    else:
        b = d.pick(exclude=(a,)) or a
        deps = (a, b)
    expr = d.choice(BINARY).format(a=a, b=b) if d.rng.random() < 0.5 else \
        d.choice(BINARY).format(a=b, b=a)
    d.emit(expr, *deps)


VIEWS = ("{a}[{i}]", "{a}[{i}:{i} + 1]", "{a}[..., {i}:{i} + 1]", "{a}[::-1]", "{a}[::2]",
         "{a}.T", "fnp.swapaxes({a}, 0, -1)", "{a}.reshape(-1)", "{a}[None]",
         "fnp.expand_dims({a}, -1)", "fnp.broadcast_to({a}[{i}], {a}.shape)",
         "{a}.reshape(-1)[{i}:{i} + {n}].reshape({a}.shape[1:])", "{a}[..., ::-1]")


def views(d):
    a = d.pick(kind="any", ndim_min=1)
    if a is not None:
        shape = np.shape(d.values[a])
        d.emit(d.choice(VIEWS).format(a=a, i=int(d.rng.integers(shape[0])),
                                      n=int(np.prod(shape[1:]))), a)


def inplace_chain(d):
    """y = op(a); w = a view of y; (y op w) op scalar: the buffer of y dies at the last
    statement while the view still reads it (the fused-kernel hazard of issue 20)."""
    a = d.pick(ndim_min=1)
    if a is None:
        return
    y = d.emit(f"{a} * {d.scalar()}", a) if d.rng.random() < 0.7 else a
    if y is None:
        return
    shape = np.shape(d.values[y])
    i = int(d.rng.integers(shape[0]))
    view = d.choice(("{y}[{i}]", "{y}[{i}:{i} + 1]", "{y}[..., {i}:{i} + 1]", "{y}[::-1]",
                     "fnp.broadcast_to({y}[{i}], {y}.shape)", "{y}.T", "{y}[..., ::-1]"))
    w = d.emit(view.format(y=y, i=i), y)
    if w is None:
        return
    op = d.choice(("+", "-", "*"))
    z = d.emit(f"({y} {op} {w}) * {d.scalar()}", y, w)
    if z is not None and d.rng.random() < 0.5:
        d.emit(f"fnp.maximum({z}, {w}) - {d.scalar()}", z, w)


REDUCTIONS = ("fnp.sum({a}, axis={ax}, keepdims={kd})", "fnp.mean({a}, axis={ax}, keepdims={kd})",
              "fnp.max({a}, axis={ax}, keepdims={kd})", "fnp.min({a}, axis={ax}, keepdims={kd})",
              "{a} - fnp.mean({a}, axis={ax}, keepdims=True)",
              "{a} / fnp.sum(fnp.abs({a}), axis={ax}, keepdims=True)",
              "fnp.cumsum({a}, axis={ax})", "fnp.sum({a})",
              "fnp.logsumexp({a}, axis={ax}, keepdims={kd})")


def reductions(d):
    a = d.pick(ndim_min=1)
    if a is not None:
        nd = np.ndim(d.values[a])
        d.emit(d.choice(REDUCTIONS).format(a=a, ax=int(d.rng.integers(-nd, nd)),
                                           kd=bool(d.rng.random() < 0.5)), a)


def comparisons(d):
    a = d.pick()
    if a is None:
        return
    b = d.pick(exclude=(a,)) or d.scalar()
    m = d.emit(f"{a} {d.choice(('>', '<=', '==', '!='))} {b}", a, *([b] if b in d.values
                                                                     else []))
    if m is None:
        return
    r = d.rng.random()
    if r < 0.4:
        d.emit(f"fnp.where({m}, {a}, {d.scalar()})", m, a)
    elif r < 0.7:
        d.emit(f"fnp.astype({m}, {a}.dtype) * {a}", m, a)
    else:
        other = d.pick(kind="bool", exclude=(m,))
        if other is not None:
            d.emit(f"fnp.logical_{d.choice(('and', 'or', 'xor'))}({m}, {other})", m, other)


def casts(d):
    a = d.pick(kind="any")
    if a is not None:
        d.emit(f"fnp.astype({a}, np.{d.choice(('float32', 'float64', 'int64'))})", a)


def integers(d):
    i = d.pick(kind="int")
    if i is None:
        return
    j = d.pick(kind="int", exclude=(i,)) or "3"
    expr = d.choice(("{i} * 3 + 1", "{i} - {j}", "fnp.maximum({i}, {j})", "{i}[::-1] + {i}",
                     "fnp.abs({i}) * {j}", "fnp.astype({i}, np.float64) * 0.5",
                     "-{i}", "{i} // 2"))
    d.emit(expr.format(i=i, j=j), i, *([j] if j in d.values else []))


def products(d):
    a = d.pick(ndim_min=1)
    if a is None:
        return
    v = d.values[a]
    if d.rng.random() < 0.5:
        c = d.const((v.shape[-1], int(d.rng.integers(1, 5))), v.dtype.name)
        d.emit(f"{a} @ {c}", a)
    elif v.ndim >= 2:
        d.emit(f"{a} @ fnp.swapaxes({a}, -1, -2)", a)


def random_draws(d):
    a = d.pick()
    if a is None:
        return
    v = d.values[a]
    dt = v.dtype.name
    draw = d.choice((f"fnad.random.normal(key, {v.shape!r}, np.{dt})",
                     f"fnad.random.uniform(fnad.random.split(key)[1], {v.shape!r}, np.{dt})",
                     f"fnp.astype(fnad.random.bernoulli(key, 0.3, {v.shape!r}), np.{dt})"))
    d.emit(f"{a} {d.choice(('+', '*'))} {draw}", a)


SCAN_BODIES = ("(c * 0.5 + x, c * x)", "(fnp.maximum(c, x), c - x)", "(c + x * x, -c)")


def scans(d):
    a = d.pick(ndim_min=2)
    if a is None:
        return
    body = d.choice(SCAN_BODIES)
    out = d.choice(("[1]", "[0]"))
    d.emit(f"lax.scan(lambda c, x: {body}, {a}[0], {a})" + out, a)


# slices that tile an axis, used together: their gradients are scatters that simplify joins
# into one concatenate (fnad/_jit/tiles.py); and ones that do not tile
SLICES = ("{a}[..., :{k}] * 2.0 - fnp.sum({a}[..., {k}:], axis=-1, keepdims=True)",
          "fnp.concatenate([{a}[{k}:], fnp.abs({a}[:{k}])], axis=0)",
          "fnp.split({a}, 2, axis=-1)[0] * fnp.split({a}, 2, axis=-1)[1]",
          "{a}[..., :{k}] + {a}[..., -{k}:]")


def slices(d):
    a = d.pick(ndim_min=1)
    if a is not None:
        n = min(np.shape(d.values[a])[0], np.shape(d.values[a])[-1])
        d.emit(d.choice(SLICES).format(a=a, k=int(d.rng.integers(1, max(n, 2)))), a)


# fnad_nn's fused primitives, whose float32 kernels (fnad.kernels.cpu) run eagerly and jitted
LAYERS = ("nn.gelu({a})", "nn.gelu({a}) * {a}", "nnf.attention_softmax({a}, None, 0.5)",
          "nnf.attention_softmax({a}, {a} > 0.5, 1.5)", "nnf.normalize({a}, 1e-5)",
          "nnf.normalize({a} * 3.0, 1e-3) + {a}", "nn.softmax({a})")


def layers(d):
    a = d.pick(ndim_min=1)
    if a is not None:
        d.emit(d.choice(LAYERS).format(a=a), a)


# row fusion (fnad/_jit/rows.py): softmax both ways, mean/var and RMS norms, keepdims sums
# over -1 and over trailing pairs, NaN/inf/signed-zero rows, 4-D rows, column sums over the
# leading axes (joined to a kernel's rows or not), and transposed views, whose reductions
# must take NumPy's program
_SM = "fnp.exp({a} - fnp.max({a}, axis=-1, keepdims=True))"
_MU = "fnp.mean({a}, axis=-1, keepdims=True)"
ROWS = (_SM + " / fnp.sum(" + _SM + ", axis=-1, keepdims=True)",
        "fnp.exp({a} - fsp.logsumexp({a}, axis=-1, keepdims=True))",
        "({a} - " + _MU + ") / fnp.sqrt(fnp.mean(({a} - " + _MU + ") ** 2, axis=-1, "
        "keepdims=True) + 1e-5) * {c} + 0.5",
        "{a} / fnp.sqrt(fnp.mean({a} * {a}, axis=-1, keepdims=True) + 1e-6) * {c}",
        "fnp.sum({a} * {s}, axis=-1, keepdims=True) - {a}",
        "fnp.sum({a}, axis=(-2, -1), keepdims=True) * {a}",
        "fnp.mean(-{a}, axis=(-2, -1), keepdims=True) - {a} * {s}",
        "-fnp.max(-{a}, axis=-1, keepdims=True) + fnp.min({a}, axis=-1, keepdims=True) * {a}",
        "fnp.sum(fnp.where({a} > 0.8, np.nan, {a}), axis=-1, keepdims=True) * {a}",
        "fnp.max(fnp.where({a} > 0.5, np.inf, -{a}), axis=-1, keepdims=True) - {a}",
        "fnp.max(fnp.where({a} > 0.0, -0.0, 0.0), axis=-1, keepdims=True) - {a} * 0.0",
        "fnp.min(fnp.where({a} > 0.3, np.nan, {a}), axis=-1, keepdims=True) + {a}",
        "fnp.sum({a}[None] * {a}[:, None], axis=-1, keepdims=True) * 0.5",
        "fnp.sum({a} * {a}, axis=0) + fnp.sum({a}, axis=-1, keepdims=True)",
        "fnp.sum({a}.T * 1.5, axis=-1, keepdims=True) + {a}.T",
        "fnp.mean(fnp.swapaxes({a}, 0, -1) - 1.0, axis=-1, keepdims=True)",
        "fnp.max({a}[..., ::-1] * {s}, axis=-1, keepdims=True) / {a}",
        "fnp.sum({a} * {s} + {a} * {a}, axis=0) + {a}",
        "fnp.sum(fnp.where({a} > 0.5, -0.0, {a} * 2.0), axis=0, keepdims=True) - {a} * {s}",
        "fnp.sum({a} * {a} - {s}, axis=tuple(range(max(fnp.ndim({a}) - 1, 1)))) + {a}",
        "fnp.sum({a} - " + _MU + ", axis=tuple(range(max(fnp.ndim({a}) - 1, 1)))) * {a}")


def rows(d):
    a = d.pick(ndim_min=1)
    if a is not None:
        c = d.const(np.shape(d.values[a])[-1:], d.values[a].dtype.name)
        d.emit(d.choice(ROWS).format(a=a, c=c, s=d.scalar()), a)


# recurrences whose weight GEMMs lax.scan hoists out of the loop (fnad/lax/_hoist.py): an
# input projection x @ w and a recurrent c @ u, w traced (it depends on an input) so that
# its gradient is one GEMM after the reverse loop; drawn only when asked for
RECURRENCES = ("(fnp.tanh(x @ {w} + c @ {u}), c * 2.0)",
               "(fnp.tanh(x @ {w}) + c @ {w} * 0.5, x @ {u})",
               "(c @ {w} + x, fnp.tanh(x @ {w}))")


def recurrences(d):
    a = d.pick(ndim_min=2)
    if a is None:
        return
    k, dt = np.shape(d.values[a])[-1], d.values[a].dtype.name
    s = d.pick(exclude=(a,)) or a
    w = d.emit(f"{d.const((k, k), dt)} * (1.0 + 0.1 * fnp.tanh(fnp.mean({s})))", s)
    if w is not None:
        body = d.choice(RECURRENCES).format(w=w, u=d.const((k, k), dt))
        d.emit(f"lax.scan(lambda c, x: {body}, {a}[0], {a})" + d.choice(("[1]", "[0]")),
               a, w)


# Python loops that jit unrolls, whose weight GEMMs fast math batches (fnad/_jit/loops.py):
# input projections a[t] @ w over the steps t of one axis, recurrences h @ u, and sums over
# the steps of a[t]^T @ (...); w and u traced (they depend on an input), so that jit(grad)
# holds their gradients as sums of per-step GEMMs; drawn only when asked for
_STEP0 = "fnp.tanh({x0} @ {w})"
LOOPS = ("functools.reduce(lambda h, t: fnp.tanh({a}[t] @ {w} + h @ {u}), range(1, {n}), "
         + _STEP0.format(x0="{a}[0]", w="{w}") + ")",
         "functools.reduce(lambda h, t: fnp.tanh({a}[:, t] @ {w} + h @ {u}) * 0.5 + h, "
         "range(1, {m}), " + _STEP0.format(x0="{a}[:, 0]", w="{w}") + ")",
         "fnp.stack([fnp.tanh({a}[t] @ {w}) * (t + 1.0) for t in range({n})])",
         "fnp.stack([{a}[t] @ {w} - {a}[t] @ {u} for t in range({n} - 1, -1, -1)])",
         "functools.reduce(lambda s, t: s + {a}[t].T @ fnp.tanh({a}[t] @ {w}), range(1, {n}), "
         "{a}[0].T @ fnp.tanh({a}[0] @ {w}))",
         "functools.reduce(lambda s, t: s + {a}[t].T @ ({a}[t] @ {u}) + fnp.sum({a}[t] @ {w}, "
         "axis=0), range({n}), {a}[0].T @ {a}[0] * 0.0)")


def loops(d):
    # steps of 1-D rows (the rows of a 2-D value: `sum(x[0] @ w, axis=0)`'s gradient once
    # took another summation order under jit, its cotangent constant copied without its
    # zero strides) or of 2-D batches (a 3-D value, or a 2-D one stacked with functions of it)
    a = d.pick(ndim_min=2)
    if a is not None and np.ndim(d.values[a]) == 2 and d.choice((True, False)):
        a = d.emit(f"fnp.stack([{a}, fnp.tanh({a}) - 0.5, {a} * 0.25])", a)
    if a is None:
        return
    shape, dt = np.shape(d.values[a]), d.values[a].dtype.name
    s = d.pick(exclude=(a,)) or a
    k = shape[-1]
    scale = f"(1.0 + 0.1 * fnp.tanh(fnp.mean({s})))"
    w = d.emit(f"{d.const((k, k), dt)} * {scale}", s)
    u = d.emit(f"{d.const((k, k), dt)} * 0.5 * {scale}", s) if w is not None else None
    if u is not None:
        d.emit(d.choice(LOOPS).format(a=a, w=w, u=u, n=shape[0], m=shape[1]), a, w, u)


# fast math (docs/jit.md): smooth programs, so that the approximations (and reassociated
# row sums) are their only difference from eager, within the stated bound
FAST = ("fnp.tanh({a})", "fnp.exp(fnp.tanh({a}))", "fnp.log(fnp.abs({a}) + 1.0)",
        "fsp.expit({a})", "fsp.erf({a})", "-fnp.exp(-fnp.abs({a}))",
        "{a} * fnp.tanh({a} * 0.5) + 1.5",
        "0.5 * {a} * (1.0 + fnp.tanh(0.7978845608 * ({a} + 0.044715 * {a} * {a} * {a})))",
        "0.5 * {a} * (1.0 + fnp.tanh(0.7978845608 * ({a} + 0.044715 * {a} ** 3)))",
        "{a} ** 3 * 0.25 - fnp.power({a}, 4) * 0.125 + {a} ** 2",
        "fnp.exp({a} - fnp.max({a}, axis=-1, keepdims=True))",
        "{a} - fnp.log(fnp.sum(fnp.exp({a} - fnp.max({a}, axis=-1, keepdims=True)), "
        "axis=-1, keepdims=True)) - fnp.max({a}, axis=-1, keepdims=True)",
        "fnp.exp(-fnp.abs({a})) / fnp.sum(fnp.exp(-fnp.abs({a})), axis=-1, keepdims=True)",
        "fnp.mean(fsp.expit({a}), axis=-1, keepdims=True) * {a}")


def fast_math(d):
    a = d.pick(ndim_min=1)
    if a is None:
        return
    if d.rng.random() < 0.25:
        b = d.pick(exclude=(a,)) or a
        d.emit(d.choice(("{a} * {b}", "{a} + {b}", "{a} - {b}")).format(a=a, b=b), a, b)
        return
    d.emit(d.choice(FAST).format(a=a), a)


# attention as users write it (fast math fuses it per tile, fnad/_jit/attention.py): the
# softmax of masked, scaled scores by exp(s - logsumexp(s)), times values; drawn only when
# asked for (with the fast_math family)
_SOFTMAX = "(lambda s: fnp.exp(s - fnp.logsumexp(s, axis=-1, keepdims=True)))"
ATTENTION = (
    _SOFTMAX + "(fnp.where(np.tri({t}, dtype=bool), {a} @ fnp.swapaxes({b}, -1, -2) / 2.0, "
    "-np.inf)) @ {c}",
    _SOFTMAX + "({a} @ fnp.swapaxes({b}, -1, -2) * 0.5) @ {c}",
    _SOFTMAX + "(fnp.where(np.tri({t}, dtype=bool).T, {a} @ fnp.swapaxes({b}, -1, -2), "
    "-np.inf)) @ {c}")


def attention(d):
    a = d.pick(ndim_min=2)
    if a is None:
        return
    shape = np.shape(d.values[a])
    same = [n for n, v in d.values.items()
            if n != a and np.shape(v) == shape and _kind(v) == "float"]
    b = d.choice(same) if same and d.rng.random() < 0.5 else f"fnp.tanh({a})"
    c = d.choice(same) if same and d.rng.random() < 0.5 else f"({a} * 0.5 - 1.0)"
    d.emit(d.choice(ATTENTION).format(a=a, b=b, c=c, t=shape[-2]),
           a, *[n for n in same if n in (b, c)])


# one line per family: name -> (weight, function); weight 0: only drawn when asked for
FAMILIES = {
    "elementwise": (6, elementwise),
    "views": (2, views),
    "inplace_chain": (3, inplace_chain),
    "reductions": (2, reductions),
    "comparisons": (2, comparisons),
    "casts": (1, casts),
    "integers": (1, integers),
    "products": (1, products),
    "random_draws": (1, random_draws),
    "scans": (1, scans),
    "layers": (2, layers),
    "slices": (1, slices),
    "rows": (2, rows),
    "fast_math": (0, fast_math),
    "recurrences": (0, recurrences),
    "attention": (0, attention),
    "loops": (0, loops),
}

SHAPES = ((4, 6), (3, 4, 5), (5, 5), (2, 3, 4), (7,))


def generate(seed, n_statements=8, families=None):
    """The program of `seed`: inputs, constants and about `n_statements` statements drawn
    from `families` (names; default all), with one to three outputs."""
    rng = np.random.default_rng(seed)
    asked = families is not None
    families = list(families or FAMILIES)
    weights = np.array([FAMILIES[f][0] or asked for f in families], float)
    shape = SHAPES[rng.integers(len(SHAPES))]
    dtype = "float32" if rng.random() < 0.3 else "float64"
    x1_shape = (shape, shape[1:], (1,) + shape[1:], shape[-1:])[rng.integers(4)]
    setup = [f"x0 = rng.standard_normal({shape!r}).astype(np.{dtype})",
             f"x1 = rng.standard_normal({x1_shape!r}).astype(np.{dtype})",
             f"i0 = rng.integers(-5, 6, {shape!r})",
             f"key = fnad.random.PRNGKey({int(rng.integers(1000))})"]
    prog = Program(seed, setup, [], [], [])
    ns = _inputs_ns(prog)
    d = Draw(rng, ns)
    tries = 0
    while len(d.stmts) < n_statements and tries < 10 * n_statements:
        tries += 1
        FAMILIES[families[rng.choice(len(families), p=weights / weights.sum())]][1](d)
    names = [s.name for s in d.stmts] or ["x0"]
    k = int(rng.integers(1, 4))
    outputs = sorted(set(names[-1:] + [names[i] for i in rng.integers(len(names), size=k)]),
                     key=names.index)
    if rng.random() < 0.1:
        outputs.append("x0")  # a passthrough: jit must hand back x0 itself, as eager does
    return Program(seed, setup, d.consts, d.stmts, outputs)


def _inputs_ns(prog):
    ns = {"np": np, "fnp": fnp, "fnad": fnad, "lax": lax, "nn": nn, "nnf": nnf, "fsp": fsp,
          "functools": functools}
    exec(prog.inputs_source(), ns)  # the fuzzer's own code
    return ns


# --------------------------------------------------------------------------- comparing
def _leaves(x):
    return fnad.tree.tree_leaves(x)


def _mismatch(got, want, tol):
    """None when `got` equals `want` (bit for bit, or within `tol` for floats), else why."""
    g, w = _leaves(got), _leaves(want)
    if len(g) != len(w):
        return f"{len(g)} outputs, eager gives {len(w)}"
    for k, (a, b) in enumerate(zip(g, w)):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"output {k}: {a.dtype}{list(a.shape)}, eager {b.dtype}{list(b.shape)}"
        if a.dtype.kind != "f":
            if not np.array_equal(a, b):
                return f"output {k}: {np.sum(a != b)} elements differ"
            continue
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            return f"output {k}: NaN at {np.argwhere(nan_a != nan_b)[:3].tolist()} differs"
        if tol is None or tol.get(a.dtype) is None:
            bits = (a.view(f"u{a.itemsize}") != b.view(f"u{b.itemsize}")) & ~nan_a
            if np.any(bits):
                at = tuple(np.argwhere(bits)[0])
                return (f"output {k}: {int(bits.sum())} elements differ in their bits, e.g. "
                        f"at {at}: {a[at]!r} vs eager {b[at]!r}")
        else:
            inf = (np.isinf(a) | np.isinf(b)) & (a != b)
            if np.any(inf):
                return f"output {k}: infinities differ at {np.argwhere(inf)[:3].tolist()}"
            ok = np.isfinite(a)
            scale = max(float(np.max(np.abs(b[ok]), initial=0.0)), 1.0)
            err = float(np.max(np.abs(a[ok] - b[ok]), initial=0.0))
            if not err <= 100 * tol[a.dtype] * scale:  # the documented tolerance, propagated
                return f"output {k}: max |difference| {err:.3g} (scale {scale:.3g})"
    return None


def _tolerance(prog, tolerance=TOLERANCE):
    """docs/jit.md's numexpr (or fast math's) tolerance per float dtype, widened to the
    loosest float dtype of the program's values: a float32 transcendental cast to float64
    keeps its float32 error."""
    seen = [tolerance[np.dtype(s.dtype)] for s in prog.stmts
            if np.dtype(s.dtype) in tolerance]
    loosest = max(seen, default=0.0)
    return {dt: max(t, loosest) for dt, t in tolerance.items()}


@contextlib.contextmanager
def _setting(backend, min_size=2):
    """Fusion on `backend` for small arrays too: restored afterwards."""
    saved = gf._backend, gf.MIN_SIZE
    gf.set_backend(backend)
    gf.MIN_SIZE = min_size
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error")
            yield
    finally:
        gf._backend, gf.MIN_SIZE = saved


def _jit(f, passes):
    return fnad.jit(f, optimize=passes, unroll=UNROLL)


def _check_jit(prog, ns, passes, tol):
    f, args = ns["f"], prog.args(ns)
    want = f(*args)
    jf = _jit(f, passes)
    first = jf(*args)
    why = _mismatch(first, want, tol)
    if why:
        return why
    for k, (o, e) in enumerate(zip(_leaves(first), _leaves(want))):
        for j, x in enumerate(args[:3]):
            if isinstance(o, np.ndarray) and np.shares_memory(o, x) and not \
                    np.shares_memory(np.asarray(e), x):
                return f"output {k} shares memory with input {j}; eager's does not"
    for k, (o, e) in enumerate(zip(_leaves(first), _leaves(want))):
        mine = any(np.shares_memory(o, x) for x in args[:3])
        if isinstance(e, np.ndarray) and e.flags.writeable and not mine and not \
                o.flags.writeable:
            return f"output {k} is read-only where eager's is a writeable array of its own"
        if o.flags.writeable and not mine:  # the caller owns what it got
            o[...] = 7 if o.dtype.kind != "b" else True
    why = _mismatch(jf(*args), want, tol)
    if why:
        return "second call, after scribbling on the first call's outputs: " + why
    saved = [(n, ns[n].copy()) for n, _ in prog.consts]
    try:
        for n, _ in prog.consts:  # closed-over arrays change: the trace keeps its values
            ns[n][...] = 9.0
        why = _mismatch(jf(*args), want, tol)
        if why:
            return "after the closed-over constants changed: " + why
    finally:
        for n, v in saved:
            ns[n][...] = v
    return None


def _check_jit_grad(prog, ns, passes, tol):
    loss, args = ns["loss"], prog.args(ns)
    want = fnad.grad(loss, argnums=(0, 1))(*args)
    return _mismatch(_jit(fnad.grad(loss, argnums=(0, 1)), passes)(*args), want,
                     tol)


def _check_grad_jit(prog, ns, passes, tol):
    loss, args = ns["loss"], prog.args(ns)
    want = fnad.grad(loss, argnums=(0, 1))(*args)
    return _mismatch(fnad.grad(_jit(loss, passes), argnums=(0, 1))(*args), want,
                     tol)


# the batched arguments of vmap(jit(f)) and jit(vmap(f)): BATCH examples, key shared
_BATCHED_SOURCE = ("(np.stack([x0 + 0.5 * k for k in range(3)]).astype(x0.dtype), "
                   "np.stack([x1 * (k + 1) for k in range(3)]).astype(x1.dtype), "
                   "np.stack([i0 + k for k in range(3)]), key)")


def _batched(prog, ns):
    return eval(_BATCHED_SOURCE, ns)  # the fuzzer's own code


def _check_vmap_jit(prog, ns, passes, tol):
    f, args = ns["f"], _batched(prog, ns)
    axes = (0, 0, 0, None)
    want = fnad.vmap(f, in_axes=axes)(*args)
    return _mismatch(fnad.vmap(_jit(f, passes), in_axes=axes)(*args), want, tol)


def _check_jit_vmap(prog, ns, passes, tol):
    f, args = ns["f"], _batched(prog, ns)
    axes = (0, 0, 0, None)
    want = fnad.vmap(f, in_axes=axes)(*args)
    return _mismatch(_jit(fnad.vmap(f, in_axes=axes), passes)(*args), want, tol)


CHECKS = {"jit": _check_jit, "jit(grad)": _check_jit_grad, "grad(jit)": _check_grad_jit,
          "vmap(jit)": _check_vmap_jit, "jit(vmap)": _check_jit_vmap}

# fast math (docs/jit.md, "Fast math"): 4 ulps a step, compared normwise to 100 times that
# (as numexpr's tolerance), for the fast_math family's programs
FAST_TOLERANCE = {dt: 4 * float(np.finfo(dt).eps) for dt in TOLERANCE}


def _check_fast_jit(prog, ns, passes, tol):
    f, args = ns["f"], prog.args(ns)
    return _mismatch(fnad.jit(f, optimize=passes, unroll=UNROLL, fast_math=True)(*args),
                     f(*args), tol)


def _check_fast_jit_grad(prog, ns, passes, tol):
    loss, args = ns["loss"], prog.args(ns)
    g = fnad.grad(loss, argnums=(0, 1))
    return _mismatch(fnad.jit(g, optimize=passes, unroll=UNROLL, fast_math=True)(*args),
                     g(*args), tol)


FAST_CHECKS = {"jit(fast)": _check_fast_jit, "jit(grad, fast)": _check_fast_jit_grad}


def _run_check(prog, check, backend, passes):
    """Why `check` fails on `prog` (a string), or None; an exception counts as a failure
    unless eager `f` raises too (a program the transforms cannot take is skipped)."""
    tol = _tolerance(prog) if backend == "numexpr" and prog.transcendental() else None
    if check in FAST_CHECKS:
        tol = _tolerance(prog, FAST_TOLERANCE)
    with _setting(backend):
        ns = prog.namespace()
        try:
            return {**CHECKS, **FAST_CHECKS}[check](prog, ns, passes, tol)
        except Exception as e:  # reported with the program
            if _eager_raises(prog, ns, check):
                return None
            return f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


def _eager_raises(prog, ns, check):
    try:
        if check in ("vmap(jit)", "jit(vmap)"):
            fnad.vmap(ns["f"], in_axes=(0, 0, 0, None))(*_batched(prog, ns))
        elif check in ("jit(grad)", "grad(jit)"):
            fnad.grad(ns["loss"], argnums=(0, 1))(*prog.args(ns))
        else:
            ns["f"](*prog.args(ns))
    except Exception:  # eager refuses it too
        return True
    return False


# --------------------------------------------------------------------------- shrinking
def _prune(prog):
    needed = set(prog.outputs)
    kept = []
    for s in reversed(prog.stmts):
        if s.name in needed:
            kept.append(s)
            needed.update(n for n in re.findall(r"\b[vx]\d+\b|\bi0\b", s.expr))
    return prog.copy(stmts=kept[::-1])


def _bypass(prog, k, dep):
    """`prog` with statement k removed and its later uses reading `dep` instead."""
    name = prog.stmts[k].name
    pat = re.compile(rf"\b{name}\b")
    stmts = [Stmt(s.name, pat.sub(dep, s.expr), [dep if x == name else x for x in s.deps],
                  s.shape, s.dtype) for s in prog.stmts[k + 1:]]
    outputs = [dep if o == name else o for o in prog.outputs]
    return prog.copy(stmts=prog.stmts[:k] + stmts, outputs=outputs)


def _first_failing(cands, fails, budget):
    for c in cands:
        if budget[0] <= 0:
            return None
        budget[0] -= 1
        if fails(c):
            return c
    return None


def shrink(prog, fails, budget=150):
    """A smaller program on which `fails(program)` still holds: fewer outputs, dead
    statements dropped, statements bypassed (their uses read one of their operands of the
    same shape and dtype instead)."""
    budget = [budget]
    if len(prog.outputs) > 1:
        prog = _first_failing([prog.copy(outputs=[o]) for o in prog.outputs], fails,
                              budget) or prog
    prog = _first_failing([_prune(prog)], fails, budget) or prog
    ns = _inputs_ns(prog)
    shapes = {n: (np.shape(ns[n]), np.asarray(ns[n]).dtype) for n in ("x0", "x1", "i0")}
    shapes.update((t.name, (t.shape, t.dtype)) for t in prog.stmts)
    while budget[0] > 0:
        cands = []
        for k in range(len(prog.stmts) - 1, -1, -1):
            s = prog.stmts[k]
            for dep in s.deps:
                if shapes.get(dep) == (s.shape, s.dtype):
                    b = _bypass(prog, k, dep)
                    cands += [_prune(b), b]
            cands.append(prog.copy(stmts=prog.stmts[:k] + prog.stmts[k + 1:]))
        smaller = _first_failing(cands, fails, budget)
        if smaller is None:
            break
        prog = smaller
    return prog


def reproduction(prog, check, backend, passes, why):
    off = sorted(set(PASSES) - set(passes))
    opt = "True" if not off else f"set(fnad.jit.PASSES) - {set(off)!r}"
    call, eager = {
        "jit": ("fnad.jit(f, **JIT)(x0, x1, i0, key)", "f(x0, x1, i0, key)"),
        "jit(grad)": ("fnad.jit(fnad.grad(loss, argnums=(0, 1)), **JIT)(x0, x1, i0, key)",
                      "fnad.grad(loss, argnums=(0, 1))(x0, x1, i0, key)"),
        "grad(jit)": ("fnad.grad(fnad.jit(loss, **JIT), argnums=(0, 1))(x0, x1, i0, key)",
                      "fnad.grad(loss, argnums=(0, 1))(x0, x1, i0, key)"),
        "vmap(jit)": ("fnad.vmap(fnad.jit(f, **JIT), in_axes=(0, 0, 0, None))(*batched)",
                      "fnad.vmap(f, in_axes=(0, 0, 0, None))(*batched)"),
        "jit(vmap)": ("fnad.jit(fnad.vmap(f, in_axes=(0, 0, 0, None)), **JIT)(*batched)",
                      "fnad.vmap(f, in_axes=(0, 0, 0, None))(*batched)"),
        "jit(fast)": ("fnad.jit(f, fast_math=True, **JIT)(x0, x1, i0, key)",
                      "f(x0, x1, i0, key)"),
        "jit(grad, fast)": ("fnad.jit(fnad.grad(loss, argnums=(0, 1)), fast_math=True, "
                            "**JIT)(x0, x1, i0, key)",
                            "fnad.grad(loss, argnums=(0, 1))(x0, x1, i0, key)")}[check]
    return (f"jit fuzz: check {check!r} on fusion backend {backend!r}, passes off: "
            f"{off or 'none'}: {why}\n--- reproduction (seed {prog.seed}) ---\n"
            "import functools\nimport numpy as np, fnad, fnad.numpy as fnp\n"
            "from fnad import lax\n"
            "from fnad.scipy import special as fsp\n"
            "from fnad._jit import fusion\n"
            f"fusion.set_backend({backend!r}); fusion.MIN_SIZE = 2\n"
            + prog.inputs_source() + prog.source() + LOSS_SOURCE
            + f"JIT = dict(optimize={opt}, unroll={UNROLL})\nbatched = {_BATCHED_SOURCE}\n"
            + f"print({call})\nprint({eager})  # eager\n")


# --------------------------------------------------------------------------- driving
def check_program(prog, backends=None, checks=None, passes_off=()):
    """Run `checks` (names of CHECKS) on every backend, with every pass on and then with
    each pass of `passes_off` switched off (for the jit check); raise FuzzFailure with a
    shrunk reproduction on the first difference."""
    for backend in backends or BACKENDS:
        for check in checks or CHECKS:
            variants = [PASSES] + ([tuple(p for p in PASSES if p != off) for off in passes_off]
                                   if check == "jit" else [])
            for passes in variants:
                why = _run_check(prog, check, backend, passes)
                if why:
                    small = shrink(prog, lambda p: _run_check(p, check, backend, passes)
                                   is not None)
                    why = _run_check(small, check, backend, passes) or why
                    raise FuzzFailure(reproduction(small, check, backend, passes, why))


def fuzz_fast_math(seeds, n_statements=6, families=("fast_math",)):
    """Programs of the fast_math family (or `families`) under jit(fast_math=True) and
    jit(grad, fast_math=True), on numba's kernels, within FAST_TOLERANCE."""
    for seed in seeds:
        prog = generate(seed, n_statements, families=list(families))
        check_program(prog, ["numba"], list(FAST_CHECKS))


def fuzz_loops(seeds, n_statements=4):
    """Programs of the loops family: jit and jit(grad) bit for bit (exact jit does not batch
    their GEMMs), jit(fast_math=True) and jit(grad, fast_math=True) within FAST_TOLERANCE,
    on numba's kernels (NumPy's without numba)."""
    backend = "numba" if "numba" in BACKENDS else "numpy"
    for seed in seeds:
        prog = generate(seed, n_statements, families=["loops"])
        check_program(prog, [backend], ["jit", "jit(grad)"] + list(FAST_CHECKS))


def fuzz(seeds, n_statements=8, backends=None, checks=None, all_passes_off=False):
    """Generate and check the program of each seed; each program also runs the jit check
    with one pass switched off (every pass, with `all_passes_off`)."""
    for seed in seeds:
        prog = generate(seed, n_statements)
        off = PASSES if all_passes_off else (PASSES[seed % len(PASSES)],)
        check_program(prog, backends, checks, off)
