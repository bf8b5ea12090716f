"""The tuple helpers of autograd.util: `subvals`, `subval`, `func`."""

__all__ = ["subvals", "subval", "func"]


def subvals(x, ivs):
    """The tuple `x` with `x[i] = v` for each `(i, v)` of `ivs`."""
    out = list(x)
    for i, v in ivs:
        out[i] = v
    return tuple(out)


def subval(x, i, v):
    """The tuple `x` with `x[i] = v`."""
    return subvals(x, [(i, v)])


def func(f):
    """`f` itself (autograd's marker for functions used as values)."""
    return f
