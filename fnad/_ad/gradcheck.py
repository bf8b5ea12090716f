"""Numerical gradient checking with JAX's `check_grads` signature and meaning.

Complex inputs get complex random directions (real and imaginary parts both drawn), and
complex outputs complex cotangents. The VJP check pairs arrays with JAX's real bilinear form
<u, v> = Re(sum(u * v)) (no conjugate), under which `vjp` is the transpose of `jvp`: for a
holomorphic f, vjp(f)(u) = u * f'(z).
"""

import numpy as np

from .._core.backend import array_module
from .._core.tracer import getval
from .._core.tree import tree_flatten, tree_unflatten
from .transforms import jvp_with_ints as jvp
from .transforms import vjp_with_ints as vjp

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]

_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2,
                np.dtype(np.float64): 1e-5}
_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2,
                np.dtype(np.float64): 1e-4}


def _leaves(tree):
    return [getval(x) for x in tree_flatten(tree)[0]]


def _random_like(args, rng):
    flat, tree = tree_flatten(args)
    out = []
    for x in flat:
        v = getval(x)
        v = np.asarray(v) if not hasattr(v, "dtype") else v
        if v.dtype.kind == "f":
            r = rng.standard_normal(v.shape).astype(v.dtype)
        elif v.dtype.kind == "c":
            r = (rng.standard_normal(v.shape) + 1j * rng.standard_normal(v.shape)).astype(v.dtype)
        else:
            r = np.zeros(v.shape, v.dtype)
        out.append(_like_backend(r, v))
    return tree_unflatten(tree, out)


def _like_backend(r, v):
    """Host array `r` on the backend of `v`."""
    return r if isinstance(v, np.ndarray) else array_module(v).asarray(r)


def _axpy(a, xs, ys):
    return tree_unflatten(tree_flatten(ys)[1],
                          [y + a * x if getval(y).dtype.kind in "fc" else y
                           for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0])])


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(_leaves(xs), _leaves(ys)):
        x, y = np.asarray(_host(x)), np.asarray(_host(y))
        if x.dtype.kind in "fc" and y.dtype.kind in "fc":  # Re(sum(x * y)), JAX's pairing
            total += float(np.real(np.sum(_wide(x) * _wide(y))))
    return total


def _wide(x):
    """`x` as float64, or complex128 if complex."""
    x = np.asarray(_host(x))
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _host(x):
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else x


def numerical_jvp(f, primals, tangents, eps):
    """Central difference `(f(x + eps t) - f(x - eps t)) / 2 eps`, as a list of leaves."""
    f_pos = _leaves(f(*_axpy(eps, tangents, primals)))
    f_neg = _leaves(f(*_axpy(-eps, tangents, primals)))
    return [(_wide(p) - _wide(n)) / (2 * eps)
            for p, n in zip(f_pos, f_neg)]


def _tol_eps(args, atol, rtol, eps):
    dtypes = [np.asarray(getval(x)).dtype if not hasattr(getval(x), "dtype") else getval(x).dtype
              for x in tree_flatten(args)[0]]
    floats = [np.finfo(d).dtype for d in dtypes if d.kind in "fc"] or [np.dtype(np.float64)]
    low = min(floats, key=lambda d: d.itemsize)
    tol = _DEFAULT_TOL.get(low, 1e-5)
    return (tol if atol is None else atol, tol if rtol is None else rtol,
            _DEFAULT_EPS.get(low, 1e-4) if eps is None else eps)


def _assert_close(actual, expected, atol, rtol, what):
    for k, (a, e) in enumerate(zip(actual, expected)):
        a, e = _wide(a), _wide(e)
        if not np.allclose(a, e, atol=atol, rtol=rtol, equal_nan=True):
            err = np.max(np.abs(a - e))
            raise AssertionError(f"check_grads: {what} mismatch in output {k} (max abs error "
                                 f"{err:.3e}, atol={atol}, rtol={rtol}):\n  analytic:  {a}\n"
                                 f"  numerical: {e}")


def _as_arrays(args):
    """`args` with Python float, complex and int leaves as 0-d NumPy arrays (JAX's check_grads
    takes check_grads(f, (1.0,), 1) too); other leaves unchanged."""
    flat, tree = tree_flatten(tuple(args))
    return tree_unflatten(tree, [np.asarray(x) if type(x) in (float, complex, int) else x
                                 for x in flat])


def check_jvp(f, args, atol=None, rtol=None, eps=None, rng=None):
    """Check `jvp(f)` against central differences in a random direction."""
    rng = rng or np.random.default_rng(0)
    args = _as_arrays(args)
    atol, rtol, eps = _tol_eps(args, atol, rtol, eps)
    tangents = _random_like(args, rng)
    _, t_out = jvp(f, tuple(args), tuple(tangents))
    _assert_close(_leaves(t_out), numerical_jvp(f, args, tangents, eps), atol, rtol, "JVP")


def check_vjp(f, args, atol=None, rtol=None, eps=None, rng=None):
    """Check `<vjp(f)(u), v> == <u, J v>` with J v from central differences."""
    rng = rng or np.random.default_rng(1)
    args = _as_arrays(args)
    atol, rtol, eps = _tol_eps(args, atol, rtol, eps)
    out, f_vjp = vjp(f, *args)
    cts = _random_like(out, rng)
    tangents = _random_like(args, rng)
    ip = _inner(tangents, f_vjp(cts))
    flat_ct = [_wide(c) for c in _leaves(cts)]
    ip_expected = sum(float(np.real(np.sum(c * n))) for c, n in
                      zip(flat_ct, numerical_jvp(f, args, tangents, eps)))
    _assert_close([ip], [ip_expected], atol, rtol, "VJP")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check derivatives of `f` at `args` up to `order` against finite differences.

    Beyond order 1 the checks recurse on the derivative maps themselves, as functions of
    both of their inputs: (x, t) -> jvp(f, x, t) and (x, u) -> vjp(f, x)(u) (autograd's
    scheme; JAX's differentiates x -> vjp(f, x)(f(x))), so a rule whose own derivative is
    wrong in the tangent or cotangent is caught too, not only in x.

    Args:
      f: function of the positional `args` (arrays, Python floats, or pytrees of arrays).
      args: tuple of arguments.
      order: highest order of derivative to check (1 = first derivatives).
      modes: any of "fwd" (jvp) and "rev" (vjp).
      atol, rtol, eps: tolerances and finite-difference step; defaults by dtype
        (float64: 1e-5 and 1e-4).

    Raises AssertionError with both values on a mismatch.

    Example:
      check_grads(fnp.tanh, (x,), order=2)
    """
    args = _as_arrays(args)
    rng = np.random.default_rng(0)

    def _check(f, args, order, what):
        if "fwd" in modes:
            _labelled(check_jvp, what, f, args, atol, rtol, eps, rng)
            if order > 1:
                t = _random_like(args, rng)
                _check(lambda a, t: jvp(f, tuple(a), tuple(t)), (args, t), order - 1,
                       f"JVP of {what}" if what else "JVP")
        if "rev" in modes:
            _labelled(check_vjp, what, f, args, atol, rtol, eps, rng)
            if order > 1:
                u = _random_like(f(*args), rng)
                _check(lambda a, u: vjp(f, *a)[1](u), (args, u), order - 1,
                       f"VJP of {what}" if what else "VJP")

    _check(f, args, order, "")


def _labelled(check, what, *args):
    """Run `check`, naming the derivative map it checked (e.g. "VJP of JVP") on failure."""
    try:
        check(*args)
    except AssertionError as e:
        if not what:
            raise
        raise AssertionError(f"{e} [checking the {what} of the function]") from None
