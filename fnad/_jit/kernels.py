"""Kernels for fused elementwise clusters (fnad/_jit/fusion.py): numba and numexpr.

numba: one loop computing every output of the cluster in the same pass. The kernel's
source is written to a file in the kernel cache directory (FNAD_CACHE_DIR, default
~/.cache/fnad/kernels) and imported from there, so numba's `cache=True` keeps the machine
code across processes. Inputs are passed flattened: "full" (the loop's shape), "scalar"
(one element, read once), "row" (broadcast over leading axes) or "col" (broadcast over
trailing axes); any other broadcast is materialised first. Each operation casts its
operands to NumPy's loop dtypes, so dtypes are NumPy's exactly; `error_model="numpy"`
gives inf/nan where NumPy does instead of raising. The kernel fills the rows `[lo, hi)`
of its loop (blocks of `BLOCK` elements when nothing broadcasts by rows or columns), each
through slices indexed from 0, so a large one can be split over fnad's thread pool
(`set_runner`, registered by fnad/kernels/__init__.py) from `SPLIT_MIN` elements touched
(FNAD_SPLIT_MIN; default never); every element is computed the same way in any part, so
the bits are the same at any thread count. A numba prange variant is made from the same
source and runs instead from `PARALLEL_MIN` elements (off by default).

Under fast math (`fnad.jit(f, fast_math=True)`) a numba kernel also computes exp, tanh, log,
erf (float32) and expit by the vectorisable approximations of fnad/_jit/fastmath.py
(`FAST_OPS`), imported by its module.

numexpr: one precompiled `NumExpr` per output (inputs and Python scalars passed as
variables of the exact dtype, so numexpr neither upcasts nor rewrites constants); later
outputs read the earlier ones. Only float32/float64/bool operations with no casts.
"""

import functools
import hashlib
import importlib.util
import math
import os
import re
import sys
import tempfile

import numpy as np

from .._core.settings import kernel_cache_dir, setting

__all__ = ["supports", "build", "PARALLEL_MIN", "SPLIT_MIN", "set_runner", "negates", "FAST_OPS",
           "power_exponent", "power_products", "square_is_product"]

# The parallel (prange) variant runs from this many elements: by default never (FNAD_PARALLEL_MIN
# sets it). Measured on the 2-core CI machine under load, numba's OpenMP threads spin-wait
# after each parallel loop and make the serial work that follows 20-100x slower; even with
# a passive wait a 262k-element kernel took 300-400 us parallel against 60-90 us serial.
PARALLEL_MIN = setting("FNAD_PARALLEL_MIN")
# A kernel touching (reading or writing, per element of the loop: its full inputs and its
# outputs) at least this many elements splits its rows over fnad's thread pool, as row
# kernels do; by default never (FNAD_SPLIT_MIN sets it): on the loaded 2-core machine it was
# measured on, splitting gained nothing at any size and cost the fast plain GPT step about
# 2 ms (`python benchmarks/jit_split.py`, docs/benchmarks.md).
SPLIT_MIN = setting("FNAD_SPLIT_MIN")
BLOCK = 4096  # elements a row of a flat loop (no row or column broadcast) holds

_runner = []  # the thread pool's run_ranges(kernel, n, args, work), once registered


def set_runner(run_ranges):
    """Split large elementwise and row kernels with `run_ranges(kernel, n, args, work)`
    (fnad/kernels/__init__.py registers fnad's pool)."""
    _runner[:] = [run_ranges]

# numba computes float math one element at a time through libm: tanh/exp/log/sin... run
# 20x slower there than NumPy's SIMD loops (float32 tanh: 60-80 ns against 3 ns an element,
# measured), so those stay NumPy equations between kernels. What remains is exact IEEE
# arithmetic: numba kernels give NumPy's bits.
_FLOAT_OPS = frozenset((
    "add", "subtract", "multiply", "divide", "negative", "positive", "square", "sqrt",
    "absolute", "fabs", "maximum", "minimum", "fmax", "fmin", "reciprocal", "floor", "ceil",
    "trunc", "sign", "copysign"))
# Under fast math (`fnad.jit(f, fast_math=True)`) these join numba kernels, computed by the
# vectorisable approximations of fnad/_jit/fastmath.py (op -> its function's name there and
# the dtypes it has; "erf" and "expit" are fnad.scipy.special's primitives)
FAST_OPS = {"exp": ("exp", ("float32", "float64")), "tanh": ("tanh", ("float32", "float64")),
            "log": ("log", ("float32", "float64")), "erf": ("erf", ("float32",)),
            "expit": ("sigmoid", ("float32", "float64"))}
# `x ** n` for a constant n computed by products in a numba kernel: n = 2 as x * x wherever
# NumPy's power(x, 2) is x * x (checked once, `square_is_product`); under fast math also n = 3
# as x * (x * x) and n = 4 as (x * x) * (x * x), JAX's integer_pow and PyTorch's order.
# NumPy's float power with a negative base runs a scalar path (~48 ns an element against
# ~0.5 for the products, float32) whose bits no product order gives. Timings and worst
# errors: `python benchmarks/fast_math.py [--bounds]`, docs/jit.md.
_FAST_POWERS = (3, 4)


_COMPARE = frozenset(("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"))
_INT_OPS = frozenset(("add", "subtract", "multiply", "negative", "maximum", "minimum",
                      "absolute"))
_LOGIC = frozenset(("logical_and", "logical_or", "logical_not", "logical_xor"))


def negates(op, args, out):
    """Whether a float step is a negation as LLVM sees it: `negative`, a product or quotient
    with a Python -1, or -0.0 minus a value. LLVM may move a negation into the operation
    that made its operand or into the one that reads its result (`-(x * y)` becomes
    `x * -y`, `-a + b` becomes `b - a`), which IEEE 754 allows but which changes the sign
    bit of a NaN result: NumPy negates the NaN, the moved negation does not. numba kernels
    leave these steps to NumPy, so NaN signs stay NumPy's (a copysign reading one included).
    """
    if out.kind != "f":
        return False
    if op == "negative":
        return True
    scalars = [a for a in args if type(a) in (bool, int, float)]
    if op in ("multiply", "divide") and any(a == -1 for a in scalars):
        return True
    first = args[0] if args else None
    return (op == "subtract" and type(first) in (int, float) and first == 0
            and math.copysign(1.0, first) < 0)


def supports(backend, op, dtypes, loop, out, fast=False):
    """Whether `backend` can compute this step exactly as NumPy types it (`fast`: or, for
    numba, by fast math's approximation)."""
    if backend == "numba":
        return _numba_supports(op, loop, out) or (fast and fast_supports(op, loop, out))
    if backend == "numexpr":
        return _numexpr_supports(op, dtypes, loop, out)
    return False


def fast_supports(op, loop, out):
    """Whether fast math computes this step in a numba kernel (fnad/_jit/fastmath.py)."""
    f = FAST_OPS.get(op)
    return f is not None and out.name in f[1] and tuple(loop) == (out,)


def _numba_supports(op, loop, out):
    kinds = {t.kind for t in loop} | {out.kind}
    if op == "where":
        return True
    if op == "astype":  # float->int and ->bool casts differ from NumPy out of range
        return out.kind == "f" or (out.kind in "iu" and loop[0].kind in "biu")
    if op in _COMPARE:
        return True
    if op in _LOGIC:
        return True
    if kinds <= {"f", "b"} and op in _FLOAT_OPS:
        return out.kind == "f"
    if kinds <= {"i", "u"} and op in _INT_OPS:
        return True
    return False


def power_exponent(args, out, fast=False):
    """The exponent n of a float `power(x, n)` a numba kernel computes by products (see
    `_FAST_POWERS`), else None."""
    if len(args) != 2 or out.kind != "f" or type(args[1]) not in (int, float):
        return None
    n = args[1]
    if n == 2 and square_is_product():
        return 2
    return int(n) if fast and n in _FAST_POWERS else None


def power_products(x, n):
    """The numba expression of `x ** n` by products, n in 2..4 (`power_exponent`)."""
    if n == 2:
        return f"({x} * {x})"
    if n == 3:
        return f"({x} * ({x} * {x}))"
    return f"(({x} * {x}) * ({x} * {x}))"


@functools.cache
def square_is_product():
    """Whether NumPy's float32 and float64 `power(x, 2)` give `x * x`'s bits here (run once,
    on wide-ranging values and the special ones)."""
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        info = np.finfo(dt)
        wide = rng.standard_normal(4096) * 10.0 ** rng.integers(-40, 40, 4096)
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.tiny, info.max,
                   info.smallest_subnormal, -info.smallest_subnormal]
        with np.errstate(all="ignore"):
            x = np.concatenate([wide, special]).astype(dt)
            if np.power(x, 2).tobytes() != (x * x).tobytes():
                return False
    return True


_NE_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "greater": ">",
             "greater_equal": ">=", "less": "<", "less_equal": "<=", "equal": "==",
             "not_equal": "!=", "logical_and": "&", "logical_or": "|"}
_NE_FUNC = {"sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
            "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
            "sinh": "sinh", "cosh": "cosh", "arcsin": "arcsin", "arccos": "arccos",
            "arctan": "arctan", "arctan2": "arctan2", "arcsinh": "arcsinh",
            "arccosh": "arccosh", "arctanh": "arctanh", "absolute": "abs"}
# (numexpr's maximum/minimum compute float32 in float64: left to NumPy)
_NE_TYPES = {np.dtype("float32"): float, np.dtype("float64"): np.float64,
             np.dtype("bool"): bool}
_NE_DTYPE = {float: np.float32, np.float64: np.float64, bool: np.bool_}


def _numexpr_supports(op, dtypes, loop, out):
    # operands must already have the loop dtype (numexpr cannot cast), Python scalars aside
    # (tested with `is`: np.dtype(bool) == bool, so `d in (bool, int, float)` lets a bool
    # array through as if it were a Python scalar)
    for d, t in zip(dtypes, loop):
        if not (d is bool or d is int or d is float) and np.dtype(d) != t:
            return False
    if any(t not in _NE_TYPES for t in loop) or out not in _NE_TYPES:
        return False
    if op in _COMPARE:
        return loop[0].kind == "f"
    if op in ("logical_and", "logical_or", "logical_not"):
        return True
    if op == "where":
        return True
    if out.kind != "f" or any(t != out for t in loop):
        return False
    return op in _NE_INFIX or op in _NE_FUNC or op == "negative"


def build(kernel, numpy_run):
    """The callable `run(*inputs, out=None) -> tuple of outputs` for `kernel` on its
    backend; `numpy_run()` makes the NumPy program used if numba fails to compile."""
    if kernel.backend != "numba":
        run = _build_numexpr(kernel)
        return lambda *xs, out=None: run(*xs)
    from numba.core.errors import NumbaError  # noqa: PLC0415 - optional dependency
    fast = _build_numba(kernel)
    state = {"run": None}

    def first(*xs, out=None):  # compiles on the first call; afterwards, one of the two
        try:
            res = fast(*xs, out=out)
            state["run"] = fast
        except NumbaError as e:
            kernel.fallback = f"{type(e).__name__}: {str(e).splitlines()[0]}"
            state["run"] = numpy_run()
            res = state["run"](*xs, out=out)
        kernel.run = state["run"]
        return res
    return first


# --------------------------------------------------------------------------- numba
# NumPy's choices on signed zeros and NaN (as its loops on this machine give them, checked by
# tests/core/test_jit_opt.py), where numba's own versions pick the other zero
_NB_TEMPLATES = {
    "maximum": "{0} if ({0} > {1} or {0} != {0}) else {1}",
    "minimum": "{0} if ({0} < {1} or {0} != {0}) else {1}",
    "fmax": "{0} if ({0} > {1} or {1} != {1}) else {1}",
    "fmin": "{0} if ({0} < {1} or {1} != {1}) else {1}",
    "sign": "(np.{t}(1) if {0} > 0 else (np.{t}(-1) if {0} < 0 else "
            "({0} if {0} != {0} else np.{t}(0))))",
}


def _dtype_name(t):
    return np.dtype(t).name if np.dtype(t) != np.dtype(bool) else "bool_"


def _scalar_literal(value, dtype):
    if isinstance(value, float) and not math.isfinite(value):
        text = "np.nan" if value != value else ("np.inf" if value > 0 else "-np.inf")
    else:
        text = repr(value)
    return f"np.{_dtype_name(dtype)}({text})"


def _kinds(kernel):
    """Each input's kind and the split (R, C) of the loop's shape for rows/columns."""
    shape = kernel.shape
    nd = len(shape)
    pads = [(1,) * (nd - len(a.shape)) + tuple(a.shape) for a in kernel.in_avals]
    size = math.prod(shape)
    for k in range(1, nd):
        kinds = []
        for p in pads:
            if p == shape:
                kinds.append("full")
            elif math.prod(p) == 1:
                kinds.append("scalar")
            elif all(s == 1 for s in p[:k]) and p[k:] == shape[k:]:
                kinds.append("row")
            elif p[:k] == shape[:k] and all(s == 1 for s in p[k:]):
                kinds.append("col")
            else:
                break
        else:
            if "row" in kinds or "col" in kinds:
                return kinds, math.prod(shape[:k]), math.prod(shape[k:])
    kinds = ["full" if p == shape else "scalar" if math.prod(p) == 1 else "general"
             for p in pads]
    return kinds, 1, size


def _numba_source(kernel, kinds):
    """The kernel over rows `[lo, hi)` of C elements each (the last may be shorter: a flat
    loop's blocks). Each row reads its inputs and writes its outputs through slices indexed
    from 0: with the index known to be non-negative numba drops its wraparound selects and
    LLVM vectorises the loop, also with several outputs (one index `r * C + c` into the
    whole arrays left a two-output loop with a fast-math tanh scalar, 8x slower)."""
    steps = kernel.steps
    nin = len(kernel.in_avals)
    ins = [f"x{k}" for k in range(nin)]
    outs = [f"o{k}" for k in range(len(kernel.outs))]
    head = [f"def kernel(lo, hi, C, n, {', '.join(ins + outs)}):"]
    pre, rows, body = [], ["        s = r * C", "        e = min(s + C, n)"], []
    ind = "            "
    for k, kind in enumerate(kinds):
        if kind == "scalar":
            pre.append(f"    a{k} = x{k}[0]")
        elif kind == "row":
            body.append(f"{ind}a{k} = x{k}[c]")
        elif kind == "col":
            rows.append(f"        a{k} = x{k}[r]")
        else:
            rows.append(f"        y{k} = x{k}[s:e]")
            body.append(f"{ind}a{k} = y{k}[c]")
    consts = {}

    def operand(o, t):
        tag, v = o
        if tag == "s":
            key = (repr(v), t.str)
            if key not in consts:
                consts[key] = f"s{len(consts)}"
                pre.append(f"    {consts[key]} = {_scalar_literal(v, t)}")
            return consts[key]
        have = kernel.in_avals[v].dtype if tag == "x" else steps[v].out
        name = f"a{v}" if tag == "x" else f"t{v}"
        return name if have == t else f"np.{_dtype_name(t)}({name})"

    for j, s in enumerate(steps):
        args = [operand(o, t) for o, t in zip(s.operands, s.loop)]
        if s.op == "where":
            expr = f"{args[1]} if {args[0]} else {args[2]}"
        elif s.op == "astype":
            expr = f"np.{_dtype_name(s.out)}({args[0]})"
        elif s.op in _NB_TEMPLATES:
            expr = _NB_TEMPLATES[s.op].format(*args, t=_dtype_name(s.out))
        elif s.op in FAST_OPS:
            expr = f"{fast_name(s.op, s.out)}({args[0]})"
        elif s.op == "power":  # fusion admits it by power_exponent
            expr = power_products(args[0], s.operands[1][1])
        else:
            expr = f"np.{s.op}({', '.join(args)})"
        body.append(f"{ind}t{j} = {expr}")
    for k, j in enumerate(kernel.outs):
        rows.append(f"        q{k} = o{k}[s:e]")
        body.append(f"{ind}q{k}[c] = t{j}")
    loop = ["    for r in prange(lo, hi):"] + rows + ["        for c in range(e - s):"]
    return "\n".join(fast_imports(s.op for s in steps) + head + pre + loop + body) + "\n"


def fast_name(op, dtype):
    """The fastmath.py function computing `op` in `dtype`: exp32, sigmoid64, ..."""
    return f"{FAST_OPS[op][0]}{np.dtype(dtype).itemsize * 8}"


def fast_imports(ops):
    """The import line of a kernel module that calls fast math's functions (with the
    digest of fastmath.py and rowlib.py: numba's disk cache checks a kernel's own file
    only, so a kernel compiled against other helpers must get another file)."""
    names = sorted({f"{FAST_OPS[op][0]}{b}" for op in ops if op in FAST_OPS
                    for b in (32, 64)} & _FAST_FUNCS)
    if not names:
        return []
    return [f"# fastmath {_helpers_digest()}",
            f"from fnad._jit.fastmath import {', '.join(names)}"]


_FAST_FUNCS = frozenset(("exp32", "exp64", "tanh32", "tanh64", "log32", "log64", "erf32",
                         "sigmoid32", "sigmoid64"))
_digest = []


def _helpers_digest():
    if not _digest:
        h = hashlib.sha1()
        for name in ("fastmath.py", "rowlib.py"):
            with open(os.path.join(os.path.dirname(__file__), name), "rb") as f:
                h.update(f.read())
        _digest.append(h.hexdigest()[:16])
    return _digest[0]


_MODULE_HEAD = """# generated by fnad.jit (fnad/_jit/kernels.py): a fused elementwise kernel
import numpy as np
from numba import njit, prange

{source}
parallel = njit(parallel=True, cache=True, error_model="numpy", nogil=True)(kernel)
serial = njit(parallel=False, cache=True, error_model="numpy", nogil=True)(kernel)
"""

_loaded = {}
_temp = []


def _temp_dir():
    if not _temp:
        _temp.append(tempfile.mkdtemp(prefix="fnad_kernels_"))
    return _temp[0]


def _load(source):
    """Write the kernel's module into the cache directory (once) and import it."""
    return _load_source(_MODULE_HEAD.format(source=source))


def _load_source(text):
    """Import the module of source `text` from the kernel cache directory (written once)."""
    digest = hashlib.sha1(text.encode()).hexdigest()[:20]
    mod = _loaded.get(digest)
    if mod is not None:
        return mod
    d = str(kernel_cache_dir())
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:  # no writable cache: this process's kernels only
        d = _temp_dir()
    path = os.path.join(d, f"fnad_kernel_{digest}.py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)  # atomic: a concurrent process sees all of it or nothing
    name = f"fnad_kernel_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _loaded[digest] = mod
    return mod


def _build_numba(kernel):
    kinds, R, C = _kinds(kernel)
    mod = _load(_numba_source(kernel, kinds))
    n = math.prod(kernel.shape)
    fn = mod.parallel if n >= PARALLEL_MIN else mod.serial
    shape = kernel.shape
    ins = [f"x{k}" for k in range(len(kinds))]
    lines = [f"def run({', '.join(ins)}, out=None):"]
    flat = []
    for k, kind in enumerate(kinds):
        if kind == "general":
            lines.append(f"    x{k} = np.asarray(np.broadcast_to(x{k}, shape), order=\"C\")")
        flat.append(f"x{k}.reshape(-1)")
    outs = [f"o{k}" for k in range(len(kernel.outs))]
    for k, (o, a) in enumerate(zip(outs, kernel.out_avals)):
        # out=: an arena slot of the program (fnad/_jit/arena.py), when it is C-contiguous
        lines.append(f"    b = None if out is None else out[{k}]")
        lines.append(f"    {o} = b.reshape(-1) if b is not None and b.flags.c_contiguous "
                     f"else np.empty({n}, np.{_dtype_name(a.dtype)})")
    if R == 1:  # a flat loop: blocks of BLOCK elements
        N, C = -(-n // BLOCK), BLOCK
    else:
        N = R
    args = ", ".join(flat + outs)
    # elements touched: the full inputs read and the outputs written
    work = n * (sum(kind in ("full", "general") for kind in kinds) + len(outs))
    if fn is mod.serial and work >= SPLIT_MIN and N > 1:
        lines.append("    if split:")
        lines.append(f"        split[0](fn, {N}, ({C}, {n}, {args}), {work})")
        lines.append("    else:")
        lines.append(f"        fn(0, {N}, {C}, {n}, {args})")
    else:
        lines.append(f"    fn(0, {N}, {C}, {n}, {args})")
    lines.append(f"    return ({', '.join(f'{o}.reshape(shape)' for o in outs)},)")
    ns = {"np": np, "fn": fn, "shape": shape, "split": _runner}
    exec(compile("\n".join(lines) + "\n", f"<{kernel.name}>", "exec"), ns)
    return ns["run"]


# --------------------------------------------------------------------------- numexpr
def _build_numexpr(kernel):
    import numexpr  # noqa: PLC0415 - optional dependency

    steps = kernel.steps
    sig = {}  # variable name -> numexpr type
    consts = {}  # name -> 0-d array
    for k, a in enumerate(kernel.in_avals):
        sig[f"x{k}"] = _NE_TYPES[a.dtype]
    text = {}
    out_of = {j: k for k, j in enumerate(kernel.outs)}

    def operand(o, t):
        tag, v = o
        if tag == "s":
            name = f"s{len(consts)}"
            consts[name] = np.array(v, t)
            sig[name] = _NE_TYPES[t]
            return name
        if tag == "x":
            return f"x{v}"
        return text[v]

    programs = []
    for j, s in enumerate(steps):
        args = [operand(o, t) for o, t in zip(s.operands, s.loop)]
        if s.op in _NE_INFIX:
            expr = f"({args[0]} {_NE_INFIX[s.op]} {args[1]})"
        elif s.op in ("negative", "logical_not"):
            expr = f"({'-' if s.op == 'negative' else '~'}{args[0]})"
        elif s.op == "where":
            expr = f"where({args[0]}, {args[1]}, {args[2]})"
        else:
            expr = f"{_NE_FUNC[s.op]}({', '.join(args)})"
        if j in out_of:
            used = [n for n in sig if _uses(expr, n)]
            nex = numexpr.NumExpr(expr, signature=[(n, sig[n]) for n in used])
            probe = [np.zeros(1, _NE_DTYPE[sig[n]]) for n in used]
            if nex(*probe).dtype != s.out:  # numexpr typed it otherwise: never guess
                raise RuntimeError(f"numexpr computes {expr} as {nex(*probe).dtype}, "
                                   f"NumPy as {s.out}; report this as a fnad bug.")
            programs.append((nex, used))
            name = f"y{out_of[j]}"
            sig[name] = _NE_TYPES[s.out]
            text[j] = name
        else:
            text[j] = expr
    shape = kernel.shape

    def run(*xs):
        env = dict(consts)
        for k, x in enumerate(xs):
            env[f"x{k}"] = x
        outs = []
        for k, (nex, used) in enumerate(programs):
            y = nex(*[env[n] for n in used])
            if y.shape != shape:
                y = np.asarray(np.broadcast_to(y, shape), order="C")  # keeps 0-d
            env[f"y{k}"] = y
            outs.append(y)
        return tuple(outs)

    return run


def _uses(expr, name):
    return re.search(rf"\b{name}\b", expr) is not None
