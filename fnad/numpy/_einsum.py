"""einsum as one linear primitive per operand; its VJP is again an einsum.

Subscripts are normalised once (ellipses expanded to spare letters, implicit output made
explicit). The cotangent of operand k is an einsum of the output cotangent with the other
operands; a label repeated within operand k (a diagonal, as in "ii->i") is restored with
identity matrices, and a label summed only within operand k with a vector of ones.
"""

import string

import numpy as np

from .. import numpy as fnp
from .._core.backend import array_module
from .._core.tracer import getval
from .._core.abstract import ShapedArray
from .._batching.families import to_front
from .._core.rules import defabstract_eval, defbatch, defjvp_linear, defvjp
from ._precision import preferred_operands
from ._util import dtype_of, shape, wrap

_MAX_OPERANDS = 32


def _einsum(*operands, subscripts, optimize=False):
    return np.einsum(subscripts, *operands, optimize=optimize)


_einsum_p = wrap(_einsum, "einsum")


def normalize_subscripts(subscripts, shapes):
    """Explicit subscripts "ab,bc->ac" with ellipses replaced by spare letters."""
    if not isinstance(subscripts, str):
        raise TypeError(f"fnad.numpy.einsum: subscripts must be a string or the interleaved "
                        f"form einsum(op0, sublist0, op1, sublist1, ..., [sublistout]), got "
                        f"{type(subscripts).__name__}.")
    s = subscripts.replace(" ", "")
    ins, out = (s.split("->") + [None])[:2] if "->" in s else (s, None)
    in_list = ins.split(",")
    if len(in_list) != len(shapes):
        raise ValueError(f"einsum: {len(in_list)} operand subscripts in {subscripts!r} but "
                         f"{len(shapes)} operands.")
    spare = [c for c in string.ascii_letters if c not in s]
    ell_nd = 0
    for sub, shp in zip(in_list, shapes):
        if "..." in sub:
            ell_nd = max(ell_nd, len(shp) - (len(sub) - 3))
    ell = "".join(spare[:ell_nd])
    expanded = []
    for sub, shp in zip(in_list, shapes):
        if "..." in sub:
            k = len(shp) - (len(sub) - 3)
            sub = sub.replace("...", ell[ell_nd - k:] if k else "")
        if len(sub) != len(shp):
            raise ValueError(f"einsum: subscripts {sub!r} don't match an operand of shape "
                             f"{shp}.")
        expanded.append(sub)
    if out is None:
        labels = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(labels) if labels.count(c) == 1
                                   and c not in ell))
    else:
        out = out.replace("...", ell)
    return ",".join(expanded) + "->" + out


def _sublist_letters(sub):
    out = ""
    for c in sub:
        if c is Ellipsis:
            out += "..."
        elif isinstance(c, (int, np.integer)) and 0 <= c < 52:
            out += string.ascii_letters[c]
        else:
            raise ValueError(f"fnad.numpy.einsum: a sublist holds integers in [0, 52) and "
                             f"Ellipsis, got {c!r} in {sub!r}.")
    return out


def _interleaved(args):
    """einsum(op0, sub0, op1, sub1, ..., [subout]) as (subscripts string, operands)."""
    ops, subs = list(args[0::2]), [_sublist_letters(s) for s in args[1::2]]
    out = None
    if len(ops) > len(subs):  # an odd count: the last item is the output sublist
        out = _sublist_letters(ops.pop())
    return ",".join(subs) + ("" if out is None else "->" + out), ops


def einsum(subscripts, *operands, out=None, optimize=False, precision=None,
           preferred_element_type=None, **kwargs):
    """Einstein summation (string subscripts, with ellipses, repeated labels and implicit
    output; or NumPy's interleaved operand/sublist form), differentiable in every operand.
    `precision=` (JAX's) is validated and ignored: NumPy multiplies in the operands' own
    dtype; `preferred_element_type=` converts the operands first, so the sum is computed and
    returned in that dtype.

    Example:
      fnp.einsum("bij,bjk->bik", x, y)
      fnp.einsum(x, [0, 1], y, [1, 2], [0, 2])   # the same as "ab,bc->ac"
    """
    if not isinstance(subscripts, str) and operands and not isinstance(operands[0], str):
        subscripts, operands = _interleaved((subscripts,) + operands)
    if out is not None or kwargs:
        raise TypeError("fnad.numpy.einsum: out=, dtype=, order= and casting= are not "
                        "supported; cast the operands first.")
    if precision is not None or preferred_element_type is not None:
        operands = preferred_operands("fnad.numpy.einsum", operands, precision,
                                      preferred_element_type)
    if len(operands) > _MAX_OPERANDS:
        raise ValueError(f"fnad.numpy.einsum: at most {_MAX_OPERANDS} operands.")
    norm = normalize_subscripts(subscripts, [shape(o) for o in operands])
    return _einsum_p(*operands, subscripts=norm, optimize=optimize)


def _vjp_rule(k):
    def vjp(g, ans, *operands, subscripts, optimize=False):
        ins, out = subscripts.split("->")
        ins = ins.split(",")
        sizes = {}
        for sub, op in zip(ins, operands):
            for c, n in zip(sub, shape(op)):
                sizes[c] = max(sizes.get(c, 1), n)
        xp = array_module(getval(g))
        dt = dtype_of(g)
        spare = iter(c for c in string.ascii_letters if c not in subscripts)
        target, consts, const_subs = [], [], []
        for c in ins[k]:
            if c in target:
                fresh = next(spare)
                target.append(fresh)
                consts.append(xp.eye(sizes[c], dtype=dt))
                const_subs.append(c + fresh)
            else:
                target.append(c)
        others = [sub for i, sub in enumerate(ins) if i != k]
        avail = set(out).union(*others, *const_subs)
        for c in dict.fromkeys(target):
            if c not in avail:
                consts.append(xp.ones(sizes[c], dtype=dt))
                const_subs.append(c)
        spec = ",".join([out] + others + const_subs) + "->" + "".join(target)
        ops = [op for i, op in enumerate(operands) if i != k]
        grad = _einsum_p(g, *ops, *consts, subscripts=spec, optimize=optimize)
        xs = shape(operands[k])
        axes = tuple(i for i, c in enumerate(ins[k]) if xs[i] == 1 and sizes[c] != 1)
        return fnp.sum(grad, axis=axes, keepdims=True) if axes else grad
    return vjp


def _batch_einsum(args, dims, subscripts, optimize=False):
    """A fresh letter for the batch axis, first in each batched operand and in the output."""
    ins, out = subscripts.split("->")
    letter = next(c for c in string.ascii_letters if c not in subscripts)
    ops = [(op, sub) if d is None else (to_front(op, d), letter + sub)
           for op, d, sub in zip(args, dims, ins.split(","))]
    spec = ",".join(s for _, s in ops) + "->" + letter + out
    return _einsum_p(*[o for o, _ in ops], subscripts=spec, optimize=optimize), 0


for _k in range(_MAX_OPERANDS):
    defvjp(_einsum_p, _vjp_rule(_k), argnums=(_k,))
defjvp_linear(_einsum_p, argnums=tuple(range(_MAX_OPERANDS)))
defbatch(_einsum_p, _batch_einsum)
del _k

# ----------------------------------------------------------------------------- abstract evaluation


def _einsum_aval(*operands, subscripts, optimize=False):
    # Each output label takes its size from the operands (size 1 broadcasts); the dtype and
    # the subscripts' validity come from einsum on stand-ins with every axis of size 1.
    ins, out = subscripts.replace(" ", "").split("->")
    sizes = {}
    for sub, a in zip(ins.split(","), operands):
        for c, n in zip(sub, a.shape):
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    tiny = np.einsum(subscripts, *[np.zeros((1,) * a.ndim, a.dtype) for a in operands])
    return ShapedArray(tuple(sizes[c] for c in out), tiny.dtype, xp=operands[0].xp)


defabstract_eval(_einsum_p, _einsum_aval)
