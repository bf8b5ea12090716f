"""numba loops of fast math's attention tiles (fnad/_jit/attention.py; imported only when
such an equation runs, so numba is imported late).

Each loop takes the tiles `[lo, hi)` of C-contiguous float32 arrays `(N, T, D)` (one tile a
(batch, head) pair) with the GIL released, so the thread pool (fnad/kernels/_threads.py)
runs ranges of tiles on several cores. A tile's products are BLAS GEMMs (`np.dot` with an
`out`: SciPy's BLAS, one thread at these sizes); the softmax between them is a loop over
the rows of the (T, T') scores, each row's allowed keys a prefix `[0, count[i])` (the
causal mask: keys past it are skipped, their probability 0) and, where `general`, a
boolean `mask` within it. `exp32`/`log32` are fast math's (fnad/_jit/fastmath.py).

Forward: P = softmax(scale q k^T) with the mask, o = P v, lse = the rows' log-sum-exp.
Backward (P computed again from q, k and lse): dP = g v^T, dS = scale P (dP - rowsum(P dP)),
dq = dS k, dk = dS^T q, dv = P^T g.
"""

import numpy as np
from numba import njit

from .fastmath import exp32, log32

__all__ = ["forward_tiles", "backward_tiles"]

_OPTS = {"cache": True, "error_model": "numpy", "nogil": True,
         "fastmath": {"contract", "reassoc"}}
_F = np.float32
_ZERO, _ONE, _NEG = _F(0.0), _F(1.0), _F(-np.inf)


@njit(**_OPTS)
def _softmax_rows(s, scale, count, mask, general, lse):
    """The rows of scores `s` (T, T') scaled and masked, in place, into probabilities;
    `lse[i]` gets row i's log-sum-exp."""
    n_k = s.shape[1]
    for i in range(s.shape[0]):
        n = count[i]
        row = s[i]
        top = _NEG
        for j in range(n):
            x = row[j] * scale
            row[j] = x
            top = max(top, x)
        if general:
            top = _NEG
            m = mask[i]
            for j in range(n):
                x = row[j] if m[j] else _NEG
                row[j] = x
                top = max(top, x)
        total = _ZERO
        for j in range(n):
            e = exp32(row[j] - top)
            row[j] = e
            total += e
        inv = _ONE / total
        for j in range(n):
            row[j] = row[j] * inv
        for j in range(n, n_k):
            row[j] = _ZERO
        lse[i] = top + log32(total)


@njit(**_OPTS)
def forward_tiles(lo, hi, q, k, v, scale, count, mask, general, with_o, o, lse):
    """o[t] = softmax(scale q[t] k[t]^T, masked) v[t] (if `with_o`) and lse[t] for the
    tiles t in [lo, hi)."""
    s = np.empty((q.shape[1], k.shape[1]), _F)
    for t in range(lo, hi):
        np.dot(q[t], k[t].T, s)
        _softmax_rows(s, scale, count, mask, general, lse[t])
        if with_o:
            np.dot(s, v[t], o[t])


@njit(**_OPTS)
def _scores_grad(p, dp, scale, count, mask, general, lse):
    """p (q k^T, in place) -> P from `lse`; dp (g v^T, in place) -> dS."""
    n_k = p.shape[1]
    for i in range(p.shape[0]):
        n = count[i]
        li = lse[i]
        pr, dr = p[i], dp[i]
        for j in range(n):
            pr[j] = exp32(pr[j] * scale - li)
        if general:
            m = mask[i]
            for j in range(n):
                pr[j] = pr[j] if m[j] else _ZERO
        di = _ZERO
        for j in range(n):
            di += pr[j] * dr[j]
        for j in range(n):
            dr[j] = pr[j] * (dr[j] - di) * scale
        for j in range(n, n_k):
            pr[j] = _ZERO
            dr[j] = _ZERO


@njit(**_OPTS)
def backward_tiles(lo, hi, q, k, v, lse, g, scale, count, mask, general, dq, dk, dv):
    """The cotangents dq, dk, dv of the tiles t in [lo, hi) given o's cotangent g."""
    p = np.empty((q.shape[1], k.shape[1]), _F)
    dp = np.empty((q.shape[1], k.shape[1]), _F)
    for t in range(lo, hi):
        np.dot(q[t], k[t].T, p)
        np.dot(g[t], v[t].T, dp)
        _scores_grad(p, dp, scale, count, mask, general, lse[t])
        np.dot(dp, k[t], dq[t])
        np.dot(dp.T, q[t], dk[t])
        np.dot(p.T, g[t], dv[t])
