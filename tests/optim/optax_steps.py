"""The optax parity harness: an fnad_optim transform and its optax counterpart run side by
side for 50 steps in float64 on random gradient trees, their updates compared after each."""

import numpy as np

import fnad
import fnad_optim as fo

SHAPES = {"w": (4, 3), "b": (3,), "k": (2, 2, 2)}


def tree(rng, scale=1.0, shapes=SHAPES):
    return {k: np.asarray(scale * rng.normal(size=s)) for k, s in shapes.items()}


def run_parity(ours, theirs, *, steps=50, seed=0, jit=False, rtol=1e-10, atol=1e-12,
               shapes=SHAPES, grads_fn=None, extra=None):
    """Run both transforms `steps` times; assert their updates agree at every step.

    `grads_fn(rng, params, step)` makes the gradients (default: a quadratic's gradient plus
    noise); `extra(params, grads)` gives keyword arguments for both updates (e.g. value=).
    Returns the final (fnad, optax) states.
    """
    import jax
    import optax

    rng = np.random.default_rng(seed)
    params = tree(rng, shapes=shapes)
    p1, p2 = params, params
    s1, s2 = ours.init(params), theirs.init(params)
    update = fnad.jit(ours.update) if jit else ours.update
    their_update = jax.jit(theirs.update)  # compiled once (lax.cond inside compiles per call)
    for step in range(steps):
        g = grads_fn(rng, p1, step) if grads_fn else fnad.tree_map(
            lambda p, n: np.asarray(0.5 * p + n), p1, tree(rng, shapes=shapes))
        kw = extra(p1, g) if extra else {}
        u1, s1 = update(g, s1, p1, **kw)
        u2, s2 = their_update(g, s2, p2, **kw)
        for key in sorted(u1):
            np.testing.assert_allclose(
                np.asarray(u1[key]), np.asarray(u2[key]), rtol=rtol, atol=atol,
                err_msg=f"step {step}, leaf {key}")
        p1 = fo.apply_updates(p1, u1)
        p2 = optax.apply_updates(p2, u2)
    compare_states(s1, s2, rtol=rtol, atol=atol)
    return s1, s2


def compare_states(ours, theirs, rtol=1e-10, atol=1e-12, where="state"):
    """Compare two optimizer states by name: NamedTuple fields and dict keys both have,
    tuples item by item, arrays of equal shape; parts only one side has (fnad's extra step
    counts, optax's masked placeholders) are passed over. Returns the arrays compared."""
    if hasattr(ours, "_fields") and hasattr(theirs, "_fields"):
        common = [f for f in ours._fields if f in theirs._fields]
        return sum(compare_states(getattr(ours, f), getattr(theirs, f), rtol, atol,
                                  f"{where}.{f}") for f in common)
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return sum(compare_states(ours[k], theirs[k], rtol, atol, f"{where}[{k!r}]")
                   for k in ours if k in theirs)
    if isinstance(ours, (tuple, list)) and isinstance(theirs, (tuple, list)):
        if len(ours) != len(theirs):
            return 0
        return sum(compare_states(a, b, rtol, atol, f"{where}[{i}]")
                   for i, (a, b) in enumerate(zip(ours, theirs)))
    if not hasattr(ours, "shape") and not isinstance(ours, (int, float, bool)):
        return 0
    a, b = np.asarray(ours), np.asarray(theirs)
    if a.shape != b.shape or a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        return 0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=where)
    return 1


def modes(names, fast_jit):
    """(name, jit) parameters: every name eagerly; under jit the names in `fast_jit` in the
    default run and the others marked slow (each jit case costs a trace and a compile)."""
    import pytest

    out = []
    for name in sorted(names):
        out.append(pytest.param(name, False, id=f"{name}-eager"))
        marks = () if name in fast_jit else (pytest.mark.slow,)
        out.append(pytest.param(name, True, id=f"{name}-jit", marks=marks))
    return out
