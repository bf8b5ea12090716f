"""Measurements shared by the op tests and tools/gradcheck_report.py.

Errors are normwise relative: max|a - b| / max(max|a|, max|b|, 1e-3), so values that
should be exactly zero are compared absolutely (to 1e-3 of scale) instead of dividing noise
by noise.
Finite differences use the 4th-order five-point stencil, accurate to ~1e-10 in float64,
so a reported error well below that says the rule is right, not merely close.
"""

import numpy as np

import fnad
from tests.numpy.casekit import torch


def rel_err(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise AssertionError(f"shape mismatch {a.shape} vs {b.shape}")
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)),
                1e-3)
    return float(np.max(np.abs(a - b), initial=0.0)) / scale


def leaves(out):
    """The arrays of an output (an array or a list/tuple of arrays), as a list."""
    if isinstance(out, (list, tuple)):
        return [x for o in out for x in leaves(o)]
    return [out]


def _fd_jvp(fun, args, tangents, eps):
    def at(h):
        return [np.asarray(o, np.float64) for o in
                leaves(fun(*[a + h * t for a, t in zip(args, tangents)]))]
    f2, f1, m1, m2 = at(2 * eps), at(eps), at(-eps), at(-2 * eps)
    return [(-a + 8 * b - 8 * c + d) / (12 * eps) for a, b, c, d in zip(f2, f1, m1, m2)]


def fd_error(case, seed=0, eps=1e-3):
    """Max relative error of the JVP and of <u, VJP> against five-point differences."""
    rng = np.random.default_rng(seed)
    args = tuple(np.asarray(a, np.float64) for a in case.args)
    tangents = [rng.standard_normal(a.shape) for a in args]
    fd = _fd_jvp(case.fun, args, tangents, eps)
    err = 0.0
    if "fwd" in case.modes:  # reverse-only cases (custom_vjp: odeint) skip the JVP
        _, t_out = fnad.jvp(case.fun, args, tuple(tangents))
        err = max([rel_err(t, f) for t, f in zip(leaves(t_out), fd)], default=0.0)
    out, f_vjp = fnad.vjp(case.fun, *args)
    cts = _like(out, rng)
    grads = f_vjp(cts)
    lhs = sum(float(np.sum(g * t)) for g, t in zip(grads, tangents))
    rhs = sum(float(np.sum(c * f)) for c, f in zip(leaves(cts), fd))
    return max(err, rel_err(lhs, rhs))


def _like(out, rng):
    if isinstance(out, (list, tuple)):
        return type(out)(_like(o, rng) for o in out)
    return rng.standard_normal(np.shape(out))


def torch_error(case, seed=1):
    """Max relative error of forward values and of the VJP against torch (float64)."""
    if case.torch_fun is None or torch is None:
        return None
    rng = np.random.default_rng(seed)
    args = tuple(np.asarray(a, np.float64) for a in case.args)
    out, f_vjp = fnad.vjp(case.fun, *args)
    cts = _like(out, rng)
    grads = f_vjp(cts)
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    touts = leaves(case.torch_fun(*ts))
    fouts = leaves(out)
    if len(touts) != len(fouts):
        raise AssertionError(f"{case.id}: {len(fouts)} outputs but torch gave {len(touts)}")
    err = max(rel_err(f, t.detach().numpy()) for f, t in zip(fouts, touts))
    pairs = [(t, torch.from_numpy(np.asarray(c, np.float64)))
             for t, c in zip(touts, leaves(cts)) if t.requires_grad]
    if pairs:
        tg = torch.autograd.grad([p[0] for p in pairs], ts, [p[1] for p in pairs],
                                 allow_unused=True)
    else:
        tg = [None] * len(ts)
    for g, t, a in zip(grads, tg, args):
        t = np.zeros(a.shape) if t is None else t.numpy()
        err = max(err, rel_err(g, t))
    return err
