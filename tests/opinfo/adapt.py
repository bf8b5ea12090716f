"""Argument adapters for tests/opinfo/mapping.py: torch's keyword names and conventions to
NumPy's (dim -> axis, keepdim -> keepdims, unbiased/correction -> ddof, ...). An adapter meets
an argument fnad has no form for and raises `Skip`; the sample is counted as skipped."""

import numpy as np

import fnad.numpy as fnp


class Skip(Exception):
    """This sample has no fnad counterpart (an argument fnad does not take)."""


class Entry:
    """How to run one OpInfo in fnad: `fn(input, *args, **kwargs)` takes the sample as torch's
    `op` does (tensors as arrays). `ref`: a function of tests/opinfo/refs.py to call on the
    torch side instead of the OpInfo's op (to fix a gauge, say); `numpy_ref`: NumPy/SciPy's
    function that decides a deliberate difference (tests/opinfo/known.py); `nograd`/`nojit`/
    `novmap`: why that check does not apply (`nograd_complex`: for complex samples only);
    `rtol`/`grad_rtol`: looser tolerances. `herm`: the positions (among the float tensors) of
    inputs only one triangle of which is read as a Hermitian matrix: gradients are compared
    on Hermitian directions (known.DIFFERENT["hermitian inputs"]); `tri`: the same for
    inputs read as a triangle (lower, or upper when the sample says upper=True). `nograd_if`:
    (which(case), why) for samples without gradient checks. `jvp_via_vjp`: why torch's
    forward mode is not the oracle here (its VJP is, through <ct, J t>)."""

    def __init__(self, fn, *, ref=None, numpy_ref=None, rtol=None, grad_rtol=None,
                 nograd=None, nograd_complex=None, nograd_if=None, nojit=None, novmap=None,
                 herm=(), tri=(), jvp_via_vjp=None):
        self.fn, self.ref, self.numpy_ref = fn, ref, numpy_ref
        self.rtol, self.grad_rtol = rtol, grad_rtol
        self.nograd, self.nograd_complex = nograd, nograd_complex
        self.nojit, self.novmap = nojit, novmap
        self.nograd_if, self.tri = nograd_if, tuple(tri)
        self.herm, self.jvp_via_vjp = tuple(herm), jvp_via_vjp


# Keyword values that mean "the default" in torch and need no counterpart.
_HARMLESS = {"device": ("cpu", None), "memory_format": None, "requires_grad": (False, True),
             "layout": None, "pin_memory": (False,)}


def kw(k, allowed=(), **rename):
    """Translate torch keywords `k`: `rename` maps a torch name to fnad's; names in
    `allowed` pass as they are; harmless defaults drop; anything else raises Skip."""
    out = {}
    for name, v in k.items():
        if name in rename:
            out[rename[name]] = v
        elif name in allowed:
            out[name] = v
        elif name in _HARMLESS:
            ok = _HARMLESS[name]
            if ok is not None and v not in ok:
                raise Skip(f"{name}={v!r}")
        else:
            raise Skip(f"keyword {name}")
    return out


def none(k):
    """No keyword beyond harmless defaults."""
    kw(k)


def ax(dim):
    """torch's dim (int, list, tuple or None) as a NumPy axis."""
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            raise Skip("dim=() (torch reads it as all axes)")
        return tuple(int(d) for d in dim)
    return dim


def un(f):
    """A unary op without keywords."""
    def run(x, **k):
        none(k)
        return f(x)
    return run


def real_only(f, why):
    """A unary op fnad (like SciPy) takes for real input only: complex samples are skipped."""
    def run(x, *args, **k):
        if np.iscomplexobj(x):
            raise Skip(why)
        return f(x, *args, **k)
    return run


def bi(f):
    """A binary op without keywords."""
    def run(x, y, **k):
        none(k)
        return f(x, y)
    return run


def red(f, dim_pos=True, **extra):
    """A reduction `f(x, axis=, keepdims=)` from torch's `(x, dim=None, keepdim=False)`."""
    def run(x, dim=None, keepdim=False, **k):
        k = kw(k, **extra)
        return f(x, axis=ax(dim), keepdims=keepdim, **k)
    return run


def ddof(k, default=1):
    """torch's unbiased/correction keywords as NumPy's ddof."""
    if "correction" in k:
        c = k.pop("correction")
        return default if c is None else c
    if "unbiased" in k:
        return int(bool(k.pop("unbiased")))
    return default


def moments(f, with_mean=False):
    """var/std (and var_mean/std_mean): torch's default is the unbiased estimate."""
    def run(x, *args, dim=None, keepdim=False, **k):
        k = dict(k)
        if args:                     # the `unbiased` variant: (x, unbiased)
            k["unbiased"] = args[0]
        d = ddof(k)
        none(k)
        out = f(x, axis=ax(dim), ddof=d, keepdims=keepdim)
        if with_mean:
            return out, fnp.mean(x, axis=ax(dim), keepdims=keepdim)
        return out
    return run


def minmax_dim(vf, af):
    """torch.max/min(x, dim, keepdim) -> (values, indices)."""
    def run(x, dim=None, keepdim=False, **k):
        none(k)
        if dim is None:
            return vf(x)
        return (vf(x, axis=dim, keepdims=keepdim), af(x, axis=dim, keepdims=keepdim))
    return run


def dtype_of(k, default=None):
    d = k.pop("dtype", default)
    return None if d is None else np.dtype(d)


def pairs(pad, ndim):
    """torch's pad (last axis first, (before, after) pairs) as NumPy's pad_width."""
    pad = list(pad)
    width = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        width[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return width


def split_sizes(n, size):
    """torch.split's chunk size as NumPy's split indices."""
    return list(range(size, n, size)) if size > 0 else []


def sections(sizes):
    """torch.split_with_sizes' sizes as NumPy's split indices."""
    return list(np.cumsum(sizes)[:-1])
