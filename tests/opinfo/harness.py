"""The machinery of the OpInfo differential tests: turn one of PyTorch's `SampleInput`s into
NumPy arrays, call the mapped fnad function, and run the five checks (value, VJP, JVP, jit,
vmap) against torch. Imported only after `pytest.importorskip("torch")`; `op_db` is imported
once per process (`ops()`), on first use.

Each check returns "pass" or raises `Skip` (the sample has no fnad form) or AssertionError.
"""

import functools
import warnings

import numpy as np
import torch

with warnings.catch_warnings():            # torch.jit.script's deprecation, on import
    warnings.simplefilter("ignore")
    import torch.autograd.forward_ad as fwad

import fnad
from fnad._batching.vmap import BatchingFallbackWarning
from tests.opinfo import known, refs
from tests.opinfo.mapping import MAPPING, Skip

DTYPES = {"float64": torch.float64, "complex128": torch.complex128}
CHECKS = ("value", "vjp", "jvp", "jit", "vmap")
VALUE_RTOL = 1e-7     # torch and NumPy/LAPACK associate differently
GRAD_RTOL = 1e-9      # relative to the largest entry of the reference (scale >= 1)
VMAP_RTOL = 1e-12     # a batched BLAS call may round differently from the loop's


@functools.cache
def ops():
    """{"name" or "name.variant": OpInfo} for every OpInfo in torch's op_db (imported once)."""
    from torch.testing._internal.common_methods_invocations import op_db
    return {key(op.name, op.variant_test_name): op for op in op_db}


def key(name, variant):
    return f"{name}.{variant}" if variant else name


def _sample_iter(name, dtype):
    op = ops()[name]
    tdtype = DTYPES[dtype]
    if tdtype not in op.supported_dtypes("cpu"):
        return iter(())
    torch.manual_seed(0)
    grad = op.supports_autograd and tdtype in op.supported_backward_dtypes("cpu")
    return iter(op.sample_inputs("cpu", tdtype, requires_grad=grad))


@functools.cache
def samples(name, dtype):
    """The OpInfo's samples for `dtype` ("float64"/"complex128"), [] where torch has none."""
    return list(_sample_iter(name, dtype))


# ----------------------------------------------------------------------------- conversion

def _is_diff(t):
    return isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex())


def to_np(v):
    """torch tensors (anywhere in lists/tuples) -> NumPy arrays; torch dtypes -> NumPy's."""
    if isinstance(v, torch.Tensor):
        return v.detach().resolve_conj().resolve_neg().cpu().numpy().copy()
    if isinstance(v, torch.dtype):
        return refs.np_dtype(v)
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(to_np(a) for a in v)
    if isinstance(v, dict):
        return {k: to_np(a) for k, a in v.items()}
    return v


def _flatten(v, out):
    """Replace every float/complex tensor in the nest `v` by a slot index into `out`."""
    if _is_diff(v):
        out.append(v)
        return _Slot(len(out) - 1)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_flatten(a, out) for a in v)
    return v          # torch's own (integer, boolean) tensors stay for the torch side


class _Slot:
    def __init__(self, i):
        self.i = i


def _fill(v, xs, numpy=True):
    if isinstance(v, _Slot):
        return xs[v.i]
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_fill(a, xs, numpy) for a in v)
    return to_np(v) if numpy else v


def leaves(v):
    """Output leaves in order: tensors/arrays/scalars out of nested tuples, lists, dicts."""
    if isinstance(v, (list, tuple)):
        return [y for a in v for y in leaves(a)]
    if isinstance(v, dict):
        return [y for k in sorted(v) for y in leaves(v[k])]
    return [v]


class Case:
    """One sample, ready to run: `fun(*xs)` is the fnad function of its float/complex tensors
    `tensors` (inputs and positional args; kwargs tensors are constants)."""

    def __init__(self, name, sample):
        self.name, self.sample = name, sample
        self.entry = MAPPING[name]
        self.tensors = []
        self._template = _flatten((sample.input, tuple(sample.args)), self.tensors)
        self.kwargs = to_np(dict(sample.kwargs))
        self.xs = [to_np(t) for t in self.tensors]
        try:                            # raises Skip for a sample without an fnad form
            self.fun(*self.xs)
        except Skip:
            raise
        except Exception:               # a failure for the checks to report
            pass

    def fun(self, *xs):
        inp, args = _fill(self._template, xs)
        return self.entry.fn(inp, *args, **self.kwargs)

    def diff_fun(self, *xs):
        """fun's float/complex outputs, as a tuple (integer outputs have no cotangent)."""
        return tuple(o for o in leaves(self.fun(*xs)) if _inexact(o))

    def torch_out(self, tensors=None):
        tensors = self.tensors if tensors is None else tensors
        inp, args = _fill(self._template, tensors, numpy=False)
        fn = getattr(refs, self.entry.ref) if self.entry.ref else ops()[self.name].op
        with warnings.catch_warnings():     # torch's deprecations; fnad's warnings stay errors
            warnings.simplefilter("ignore")
            return fn(inp, *args, **self.sample.kwargs)


def _inexact(o):
    dtype = o.dtype if hasattr(o, "dtype") else np.asarray(o).dtype
    return np.issubdtype(dtype, np.inexact)


@functools.cache
def cases(name, dtype):
    """(cases, skipped): the samples of `name` in `dtype` that fnad can take, and the count
    of the others."""
    out, skipped = [], 0
    for s in samples(name, dtype):
        try:
            out.append(Case(name, s))
        except Skip:
            skipped += 1
    return out, skipped


# ----------------------------------------------------------------------------- comparisons

def _scale(ref):
    return max(1.0, float(np.max(np.abs(ref), initial=0.0))) if np.size(ref) else 1.0


def assert_close(actual, expect, rtol, what, dtype_too=False):
    a, e = leaves(actual), leaves(expect)
    assert len(a) == len(e), f"{what}: {len(a)} outputs, expected {len(e)}"
    for i, (x, y) in enumerate(zip(a, e)):
        x = np.asarray(to_np(x))
        y = np.asarray(to_np(y))
        assert x.shape == y.shape, f"{what}[{i}]: shape {x.shape}, expected {y.shape}"
        if dtype_too:
            assert x.dtype == y.dtype, f"{what}[{i}]: dtype {x.dtype}, expected {y.dtype}"
        if x.dtype == bool or y.dtype == bool or not np.issubdtype(y.dtype, np.inexact):
            np.testing.assert_array_equal(x, y, err_msg=f"{what}[{i}]")
        elif rtol == 0:
            np.testing.assert_array_equal(x, y, err_msg=f"{what}[{i}]", strict=True)
        else:
            fin = np.isfinite(y)
            if np.issubdtype(x.dtype, np.inexact):      # float32/float16 results
                rtol = max(rtol, 8 * float(np.finfo(x.dtype).eps))
            np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * _scale(y[fin]),
                                       equal_nan=True, err_msg=f"{what}[{i}]")


# ----------------------------------------------------------------------------- the checks

def check_value(case):
    expect = case.torch_out()
    actual = case.fun(*case.xs)
    np_ref = case.entry.numpy_ref
    if np_ref is not None:            # a known difference: NumPy/SciPy decides
        expect = np_ref(*case.xs, **case.kwargs)
    assert_close(actual, expect, case.entry.rtol or VALUE_RTOL, f"{case.name} value")


def _torch_diff_outputs(case, tensors):
    out = leaves(case.torch_out(tensors))
    return [o for o in out if isinstance(o, torch.Tensor) and o.requires_grad]


def _rng(case):
    return np.random.default_rng(len(case.xs) * 7919 + sum(np.size(x) for x in case.xs))


def _like(rng, x):
    x = np.asarray(x)
    r = rng.standard_normal(x.shape)
    if np.iscomplexobj(x):
        r = r + 1j * rng.standard_normal(x.shape)
    return np.asarray(r, x.dtype)


def _need_grad(case):
    op = ops()[case.name]
    if not op.supports_autograd or not case.tensors:
        raise Skip("torch has no gradient")
    if case.entry.nograd:
        raise Skip(case.entry.nograd)
    if case.entry.nograd_complex and any(np.iscomplexobj(x) for x in case.xs):
        raise Skip(case.entry.nograd_complex)
    if case.entry.nograd_if and case.entry.nograd_if[0](case):
        raise Skip(case.entry.nograd_if[1])


def _herm(g):
    return (g + np.conj(np.swapaxes(g, -1, -2))) / 2


def _project(case, grads):
    """Gradients on the directions an input is read along: Hermitian (Entry.herm) or one
    triangle (Entry.tri)."""
    tri = np.triu if case.kwargs.get("upper") else np.tril
    return [_herm(np.asarray(g)) if i in case.entry.herm else
            tri(np.asarray(g)) if i in case.entry.tri else g for i, g in enumerate(grads)]


def _torch_vjp(case, cts):
    """fnad's convention from torch's: conj(torch's grad with the cotangent conjugated)."""
    tensors = [t.detach().requires_grad_(True) for t in case.tensors]
    outs = _torch_diff_outputs(case, tensors)
    if len(outs) != len(cts):
        raise Skip("torch and fnad differ in which outputs are differentiable")
    gouts = [torch.from_numpy(np.asarray(np.conj(c)).copy()) for c in cts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grads = torch.autograd.grad(outs, tensors, gouts, allow_unused=True)
    return [np.zeros_like(x) if g is None or g._is_zerotensor() else np.conj(to_np(g))
            for g, x in zip(grads, case.xs)]


def check_vjp(case):
    _need_grad(case)
    out, vjp_fun = fnad.vjp(case.diff_fun, *case.xs)
    if not out:
        raise Skip("no float output")
    rng = _rng(case)
    cts = tuple(_like(rng, o) for o in out)
    actual = _project(case, vjp_fun(cts))
    expect = _project(case, _torch_vjp(case, cts))
    assert_close(actual, expect, case.entry.grad_rtol or GRAD_RTOL, f"{case.name} vjp")


def check_jvp(case):
    _need_grad(case)
    rng = _rng(case)
    tangents = tuple(_project(case, [_like(rng, x) for x in case.xs]))
    out, tan = fnad.jvp(case.diff_fun, tuple(case.xs), tangents)
    if not out:
        raise Skip("no float output")
    rtol = case.entry.grad_rtol or GRAD_RTOL
    if ops()[case.name].supports_forward_ad and not case.entry.jvp_via_vjp:
        with fwad.dual_level():
            duals = [fwad.make_dual(t.detach(), torch.from_numpy(np.asarray(d)))
                     for t, d in zip(case.tensors, tangents)]
            outs = [o for o in leaves(case.torch_out(duals)) if isinstance(o, torch.Tensor)
                    and (o.is_floating_point() or o.is_complex())]
            tans = [fwad.unpack_dual(o).tangent for o in outs]
            expect = [np.zeros(o.shape, to_np(o).dtype) if t is None or t._is_zerotensor()
                      else to_np(t) for o, t in zip(outs, tans)]
        assert_close(tan, expect, rtol, f"{case.name} jvp")
        return
    # torch has no forward mode here: <ct, J t> must equal <J^T ct, t> with torch's J^T ct
    cts = tuple(_like(rng, o) for o in out)
    lhs = sum(np.sum(np.real(c * t)) for c, t in zip(cts, tan))
    rhs = sum(np.sum(np.real(g * t)) for g, t in zip(_torch_vjp(case, cts), tangents))
    assert_close(lhs, rhs, rtol, f"{case.name} jvp (against torch's vjp)")


def check_jit(case):
    if case.entry.nojit:
        raise Skip(case.entry.nojit)
    eager = case.fun(*case.xs)
    staged = fnad.jit(case.fun)(*case.xs)
    assert_close(staged, eager, 0, f"{case.name} jit", dtype_too=True)


def _second_example(case):
    """The batch's second example: the sample's inputs scaled by 1 +- 1%, or the sample itself
    where that leaves the function's domain (a warning, an error or a new NaN)."""
    rng = np.random.default_rng(1)
    second = [x * (1 + 0.01 * rng.uniform(-1, 1, np.shape(x))).astype(np.asarray(x).dtype)
              for x in case.xs]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a, b = leaves(case.fun(*case.xs)), leaves(case.fun(*second))
        if len(a) != len(b) or any(np.shape(p) != np.shape(q) or
                                   np.sum(np.isnan(p)) != np.sum(np.isnan(q))
                                   for p, q in zip(a, b)):
            return list(case.xs)
    except Exception:                    # outside the domain: batch two copies
        return list(case.xs)
    return second


def check_vmap(case):
    if case.entry.novmap:
        raise Skip(case.entry.novmap)
    if not case.xs:
        raise Skip("no float input to batch")
    second = _second_example(case)
    batch = [np.stack([a, b]) for a, b in zip(case.xs, second)]
    with warnings.catch_warnings():      # a primitive without a batching rule loops: correct
        warnings.simplefilter("ignore", BatchingFallbackWarning)
        mapped = fnad.vmap(case.fun)(*batch)
    loop = [case.fun(*case.xs), case.fun(*second)]
    stacked = [np.stack([np.asarray(a), np.asarray(b)])
               for a, b in zip(leaves(loop[0]), leaves(loop[1]))]
    assert_close(leaves(mapped), stacked, VMAP_RTOL, f"{case.name} vmap", dtype_too=True)


RUN = {"value": check_value, "vjp": check_vjp, "jvp": check_jvp, "jit": check_jit,
       "vmap": check_vmap}


@functools.cache
def first_case(name, dtype):
    """The first sample of `name` in `dtype` that fnad can take (None if none), without
    building the others."""
    for s in _sample_iter(name, dtype):
        try:
            return Case(name, s)
        except Skip:
            pass
    return None


def quick_dtype(name):
    """The default suite runs one dtype per OpInfo: complex128 for every other OpInfo (in
    sorted order) that has complex samples, float64 for the rest."""
    i = sorted(MAPPING).index(name)
    if i % 2 and first_case(name, "complex128") is not None:
        return "complex128"
    return "float64" if first_case(name, "float64") is not None else "complex128"


def quick_cases(name, dtype):
    """The default suite's cases: the first sample fnad can take."""
    case = first_case(name, dtype)
    return [] if case is None else [case]


def xfail_reason(name, check, dtype, case=None):
    """The defect known.XFAIL lists for this op, check and dtype (and sample), or None."""
    for k in ((name, check, dtype), (name, "*", dtype), (name, check), (name, "*")):
        if k in known.XFAIL:
            reason = known.XFAIL[k]
            if isinstance(reason, tuple):       # (reason, which samples)
                reason, which = reason
                if case is not None and not which(case):
                    continue
            return reason
    return None


def outcome(case, check, dtype):
    """("passed" | "skipped" | "failed" | "xfailed", message) of one check on one case."""
    try:
        with warnings.catch_warnings():      # torch's own warnings; fnad's stay errors
            warnings.filterwarnings("ignore", module=r"torch(\.|$)")
            # NumPy's floating-point warnings (a NaN from a negative base, ...): torch's
            # results hold the same NaN/inf silently, and the values are compared
            warnings.filterwarnings("ignore", r"(invalid value|divide by zero|overflow) "
                                    "encountered", RuntimeWarning)
            RUN[check](case)
    except Skip as e:
        return "skipped", str(e)
    except Exception as e:          # every failure is reported
        msg = f"{type(e).__name__}: {e}"
        return ("xfailed" if xfail_reason(case.name, check, dtype, case) else "failed"), msg
    return "passed", ""
