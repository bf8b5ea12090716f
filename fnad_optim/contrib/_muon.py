"""Muon (Jordan et al. 2024): momentum orthogonalised by a Newton-Schulz iteration for the
matrix params, AdamW for the others, as optax.contrib's."""

import math
from typing import Any, NamedTuple

import numpy as np

import fnad
import fnad.numpy as fnp

from .._alias import adamw
from .._base import (chain, div_as, inc_count, named, stateless, transform,
                     zero_count)
from .._linesearch import first_leaf, scalar
from .._transforms import add_decayed_weights, scale_by_learning_rate
from .._groups import partition

__all__ = ["muon", "scale_by_muon", "scale_by_shape", "orthogonalize_via_newton_schulz",
           "MuonState", "MuonDimensionNumbers"]

_PRECONDITIONINGS = ("frobenius", "spectral", "aol", "schatten")
_PRESETS = {"standard": (3.4445, -4.7750, 2.0315),
            "dion": ((4.0848, -6.8946, 2.9270), (3.9505, -6.3029, 2.6377),
                     (3.7418, -5.5913, 2.3037), (2.8769, -3.1427, 1.2046),
                     (2.8366, -3.0525, 1.2012))}


class MuonDimensionNumbers(NamedTuple):
    """Which axes of a weight are its matrix's rows (reduction) and columns (output); the
    other axes are batch axes, each slice orthogonalised on its own."""

    reduction_axis: Any = 0
    output_axis: Any = 1


class MuonState(NamedTuple):
    """The step count, the momentum and the Newton-Schulz coefficients."""

    count: Any
    mu: Any
    ns_coeffs: Any


def _axes(x, dims):
    as_tuple = lambda a: (a,) if isinstance(a, int) else tuple(a)
    red = tuple(a % x.ndim for a in as_tuple(dims.reduction_axis))
    out = tuple(a % x.ndim for a in as_tuple(dims.output_axis))
    return red, out


def _fans(x, dims):
    red, out = _axes(x, dims)
    return math.prod(x.shape[a] for a in red), math.prod(x.shape[a] for a in out)


def _as_batch_of_matrices(x, dims):
    """`x` as (batch, rows, columns) and the function that puts such an array back."""
    if x.ndim < 2:
        raise ValueError(f"muon: a weight orthogonalised must have 2 or more axes, got shape "
                         f"{x.shape}; give it no dimension numbers (None) so AdamW takes it.")
    red, out = _axes(x, dims)
    if set(red) & set(out):
        raise ValueError(f"muon: reduction axes {red} and output axes {out} overlap "
                         f"(shape {x.shape}).")
    batch = tuple(a for a in range(x.ndim) if a not in red and a not in out)
    perm = batch + red + out
    inv = tuple(int(i) for i in np.argsort(perm))
    sizes = [math.prod(x.shape[a] for a in g) for g in (batch, red, out)]
    unflat = tuple(x.shape[a] for a in perm)
    return (fnp.reshape(fnp.transpose(x, perm), sizes),
            lambda y: fnp.transpose(fnp.reshape(y, unflat), inv))


def _ns_step(x, c, first, preconditioning, eps):
    if first and preconditioning == "aol":
        a = x @ fnp.conj(x.T)
        s = (1.0 / fnp.sqrt(fnp.maximum(fnp.sum(fnp.abs(a), axis=-1), eps)))[:, None]
        x, a = x * s, a * s * s.T
    elif first and preconditioning == "schatten":
        a = x @ x.T
        s = 1.0 / fnp.sqrt(fnp.maximum(fnp.sqrt(fnp.sum(a * a)), eps))
        x, a = x * s, a * s ** 2
    else:
        a = x @ fnp.conj(x.T)
    b = c[1] * a + (c[2] * a) @ a
    return c[0] * x + b @ x


def _orthogonalize_matrix(x, coeffs, ns_steps, preconditioning, eps):
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    if preconditioning == "frobenius":
        x = x / (fnp.sqrt(fnp.sum(fnp.real(x * fnp.conj(x)))) + eps)
    elif preconditioning == "spectral":
        x = x / (fnp.linalg.norm(x, ord=2) + eps)
    coeffs = fnp.astype(coeffs, x.dtype)
    rows = [coeffs] * int(ns_steps) if coeffs.ndim == 1 else list(coeffs)
    for i, c in enumerate(rows):
        x = _ns_step(x, c, i == 0, preconditioning, eps)
    return x.T if transposed else x


def orthogonalize_via_newton_schulz(x, ns_coeffs, ns_steps=5, preconditioning="frobenius",
                                    eps=1e-8, dimension_numbers=None):
    """The Newton-Schulz approximation of the orthogonal factor of `x` (U V^T of its SVD,
    with singular values near 1), as optax.contrib's.

    Args:
      x: a matrix, or an array with `dimension_numbers`.
      ns_coeffs: the quintic's coefficients, shape (3,) or one row per step (n, 3).
      ns_steps: iterations (with coefficients of shape (3,)).
      preconditioning: "frobenius", "spectral", "aol" or "schatten".
      eps: guards the normalisation.
      dimension_numbers: a `MuonDimensionNumbers` for arrays that are not matrices.

    Returns:
      An array of `x`'s shape.

    Example:
      o = orthogonalize_via_newton_schulz(g, fnp.asarray((3.4445, -4.7750, 2.0315)))
    """
    if preconditioning not in _PRECONDITIONINGS:
        raise ValueError(f"orthogonalize_via_newton_schulz: unknown preconditioning "
                         f"{preconditioning!r}; use one of {_PRECONDITIONINGS}.")
    ns_coeffs = fnp.asarray(ns_coeffs)
    if ns_coeffs.ndim > 2 or ns_coeffs.shape[-1] != 3:
        raise ValueError("orthogonalize_via_newton_schulz: ns_coeffs must have shape (3,) or "
                         f"(n, 3), got {ns_coeffs.shape}.")
    if x.ndim != 2 and not isinstance(dimension_numbers, MuonDimensionNumbers):
        raise ValueError("orthogonalize_via_newton_schulz: x must be a matrix, or give "
                         f"dimension_numbers; got shape {x.shape}.")
    if x.ndim == 2:
        dimension_numbers = MuonDimensionNumbers()
    flat, back = _as_batch_of_matrices(x, dimension_numbers)
    mats = [_orthogonalize_matrix(flat[i], ns_coeffs, ns_steps, preconditioning, eps)
            for i in range(flat.shape[0])]
    return back(fnp.stack(mats))


def _dim_leaves(dims):
    return fnad.tree_flatten(
        dims, is_leaf=lambda d: d is None or isinstance(d, MuonDimensionNumbers))[0]


def _dims_tree(weight_dimension_numbers, updates):
    """The `MuonDimensionNumbers` of each leaf (None where a leaf is not orthogonalised)."""
    dims = weight_dimension_numbers
    if callable(dims) and not isinstance(dims, MuonDimensionNumbers):
        dims = dims(updates)
    leaves, treedef = fnad.tree_flatten(updates)
    if dims is None or isinstance(dims, MuonDimensionNumbers):
        return leaves, treedef, [dims or MuonDimensionNumbers()] * len(leaves)
    d_leaves = _dim_leaves(dims)
    if len(d_leaves) != len(leaves):
        raise ValueError(f"muon: weight_dimension_numbers has {len(d_leaves)} entries for "
                         f"{len(leaves)} leaves; give one MuonDimensionNumbers (or None) per "
                         "leaf, in a tree shaped like the params.")
    return leaves, treedef, d_leaves


def scale_by_shape(weight_dimension_numbers=None, consistent_rms=None):
    """Scale each orthogonalised update by `sqrt(max(1, fan_out / fan_in))`, or by
    `sqrt(max(fan_in, fan_out)) * consistent_rms`, as optax.contrib's.

    Args:
      weight_dimension_numbers: a `MuonDimensionNumbers`, a tree of them, or a function
        of the updates giving one; None: every leaf is a matrix.
      consistent_rms: None, or the target RMS of the updates.

    Returns:
      A `GradientTransformation` with an `EmptyState`.

    Example:
      tx = chain(scale_by_muon(), scale_by_shape())
    """
    def fn(updates, params):
        leaves, treedef, dims = _dims_tree(weight_dimension_numbers, updates)
        out = []
        for u, d in zip(leaves, dims):
            if d is not None:
                fan_in, fan_out = _fans(u, d)
                s = (math.sqrt(max(1, fan_out / fan_in)) if consistent_rms is None
                     else math.sqrt(max(fan_in, fan_out)) * consistent_rms)
                u = s * u
            out.append(u)
        return treedef.unflatten(out)

    return stateless("scale_by_shape", fn)


def _coeffs(ns_coeffs):
    return _PRESETS[ns_coeffs] if isinstance(ns_coeffs, str) else ns_coeffs


def scale_by_muon(ns_coeffs=_PRESETS["standard"], ns_steps=5, beta=0.95, eps=1e-8,
                  mu_dtype=None, *, nesterov=True, adaptive=False,
                  preconditioning="frobenius", weight_dimension_numbers=None):
    """Muon's direction: the (Nesterov) momentum, bias-corrected, orthogonalised by
    `ns_steps` Newton-Schulz iterations, as optax.contrib's.

    Args:
      ns_coeffs: the coefficients, (a, b, c) or one triple per step.
      ns_steps: the iterations.
      beta: the momentum decay.
      eps: guards the normalisation.
      mu_dtype: the momentum's dtype (default: the params').
      nesterov: use Nesterov momentum.
      adaptive: scale each update by its inner product with the momentum.
      preconditioning: "frobenius", "spectral", "aol" or "schatten".
      weight_dimension_numbers: see `scale_by_shape`.

    Returns:
      A `GradientTransformation` with a `MuonState`.

    Example:
      tx = chain(scale_by_muon(), scale_by_shape(), scale_by_learning_rate(0.02))
    """
    coeffs = np.asarray(_coeffs(ns_coeffs), np.float64)
    if coeffs.ndim > 2 or coeffs.shape[-1] != 3:
        raise ValueError(f"scale_by_muon: ns_coeffs must have shape (3,) or (n, 3), got "
                         f"{coeffs.shape}.")
    if coeffs.ndim == 2:
        if coeffs.shape[0] > ns_steps:
            raise ValueError(f"scale_by_muon: {coeffs.shape[0]} rows of ns_coeffs for "
                             f"ns_steps={ns_steps}; give at most ns_steps rows.")
        coeffs = coeffs[-ns_steps:]

    def init(params):
        mu = fnad.tree_map(lambda p: fnp.zeros_like(p, dtype=mu_dtype), params)
        like = first_leaf(params)
        ns = fnp.stack([scalar(float(c), np.float64, like) for c in coeffs.ravel()])
        return MuonState(zero_count(params), mu, fnp.reshape(ns, coeffs.shape))

    def update(updates, state, params=None):
        mu = fnad.tree_map(lambda g, m: (1 - beta) * g + beta * m, updates, state.mu)
        count = inc_count(state.count)
        corr = lambda t, c: fnad.tree_map(lambda x: div_as(x, 1 - beta ** c), t)
        if nesterov:
            mu_hat = fnad.tree_map(lambda m, g: beta * m + (1 - beta) * g,
                                   corr(mu, inc_count(count)), corr(updates, count))
        else:
            mu_hat = corr(mu, count)
        leaves, treedef, dims = _dims_tree(weight_dimension_numbers, mu_hat)
        out = [orthogonalize_via_newton_schulz(x, state.ns_coeffs, ns_steps, preconditioning,
                                               eps, d) if d is not None else x
               for x, d in zip(leaves, dims)]
        out = treedef.unflatten(out)
        if adaptive:
            out = fnad.tree_map(lambda m, o: fnp.sum(fnp.conj(m) * o) * o, mu_hat, out)
        if mu_dtype is not None:
            mu = fnad.tree_map(lambda m: fnp.astype(m, mu_dtype), mu)
        return out, MuonState(count, mu, state.ns_coeffs)

    return transform("scale_by_muon", init, update, MuonState)


def muon(learning_rate, ns_coeffs=_PRESETS["standard"], ns_steps=5, beta=0.95, eps=1e-8,
         weight_decay=0.0, weight_decay_mask=None, mu_dtype=None, *, nesterov=True,
         adaptive=False, preconditioning="frobenius", adam_b1=0.9, adam_b2=0.999,
         adam_eps_root=0.0, adam_weight_decay=0.0, adam_learning_rate=None,
         muon_weight_dimension_numbers=None, consistent_rms=None):
    """Muon for the matrix params (or those `muon_weight_dimension_numbers` names), AdamW
    for the others, as optax.contrib's: the updates are optax's, and so is the state, a
    `PartitionState` whose `inner_states` are `{"muon": MaskedState(muon's chain), "adam":
    MaskedState(adamw)}` (each inner state over its leaves, as a list: optax's holds the
    params tree with `MaskedNode`s, which flatten to the same leaves).

    Args:
      learning_rate: Muon's learning rate (a number or a schedule).
      ns_coeffs, ns_steps, beta, eps, mu_dtype, nesterov, adaptive, preconditioning: see
        `scale_by_muon` (`ns_coeffs` may be a preset name: "standard" or "dion").
      weight_decay: Muon's decoupled weight decay; `weight_decay_mask` selects its leaves.
      adam_b1, adam_b2, adam_eps_root, adam_weight_decay: AdamW's, for the other params.
      adam_learning_rate: AdamW's learning rate (default: `learning_rate`).
      muon_weight_dimension_numbers: a tree shaped like the params of
        `MuonDimensionNumbers` (None: AdamW), or a function of the params returning one;
        None: every 2-D param is a matrix.
      consistent_rms: see `scale_by_shape`.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = muon(0.02)
      opt_state = opt.init(params)
    """
    if isinstance(ns_coeffs, str) and ns_coeffs not in _PRESETS:
        raise ValueError(f"muon: unknown ns_coeffs preset {ns_coeffs!r}; use one of "
                         f"{sorted(_PRESETS)} or a tuple of coefficients.")
    dims = muon_weight_dimension_numbers
    chosen = {}  # the dimension numbers of the Muon leaves, set by `labels` before each use

    def dim_leaves(params):
        d = dims(params) if callable(dims) and not isinstance(dims, MuonDimensionNumbers) \
            else dims
        leaves = fnad.tree_leaves(params)
        if d is None:
            return [MuonDimensionNumbers() if fnp.ndim(x) == 2 else None for x in leaves]
        flat = _dim_leaves(d)
        if len(flat) != len(leaves):
            raise ValueError(f"muon: muon_weight_dimension_numbers has {len(flat)} entries "
                             f"for {len(leaves)} params leaves; give one MuonDimensionNumbers "
                             "(or None for AdamW) per leaf, in a tree shaped like the params.")
        return flat

    def labels(params):
        flat = dim_leaves(params)
        chosen["dims"] = [d for d in flat if d is not None]
        return fnad.tree_structure(params).unflatten(
            ["muon" if d is not None else "adam" for d in flat])

    muon_dims = lambda updates: chosen["dims"]
    inner = chain(scale_by_muon(ns_coeffs=_coeffs(ns_coeffs), ns_steps=ns_steps, beta=beta,
                                eps=eps, mu_dtype=mu_dtype, nesterov=nesterov,
                                adaptive=adaptive, preconditioning=preconditioning,
                                weight_dimension_numbers=muon_dims),
                  scale_by_shape(muon_dims, consistent_rms),
                  add_decayed_weights(weight_decay, weight_decay_mask),
                  scale_by_learning_rate(learning_rate))
    other = adamw(learning_rate if adam_learning_rate is None else adam_learning_rate,
                  b1=adam_b1, b2=adam_b2, eps=eps, eps_root=adam_eps_root,
                  weight_decay=adam_weight_decay, nesterov=nesterov)
    return named("muon", partition({"muon": inner, "adam": other}, labels))
