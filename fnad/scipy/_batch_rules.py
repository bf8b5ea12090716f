"""Batching rules (fnad.vmap) of fnad.scipy's primitives: the special functions are
elementwise, softmax and log_softmax reduce along `axis`, sqrtm and the LU factorisation
work on stacks of matrices. `convolve_full` batches by the loop fallback."""

from .._core.tracer import PRIMITIVES
from .._batching.families import axis_batch, elementwise_batch, stack_batch

_ELEMENTWISE = ("betainc", "betaincinv", "digamma", "erf", "erfc", "erfcinv", "erfcx", "erfinv",
                "expit", "gamma", "gammainc", "gammainc_da", "gammasgn", "gammaincc", "gammaincinv",
                "gammaln", "i0", "i0e", "i1", "i1e", "iv", "ive", "j0", "j1", "jn", "log_ndtr",
                "logit", "polygamma", "rgamma", "wofz", "xlog1py", "xlogy", "y0", "y1", "yn")


def _register():
    prims = {p.name: p for p in PRIMITIVES}
    for n in _ELEMENTWISE:
        prims[n].batch = elementwise_batch(prims[n])
    for n in ("softmax", "log_softmax"):
        prims[n].batch = axis_batch(prims[n])
    for n in ("sqrtm", "lu_nopivot", "lu_pivots"):
        prims[n].batch = stack_batch(prims[n])
    prims["lu_swaps_to_perm"].batch = stack_batch(prims["lu_swaps_to_perm"], core=(1, 0))


_register()
