"""autograd.core's public names on fnad's transforms: `make_vjp` and `make_jvp` (onto
fnad.vjp and fnad.jvp), autograd's rule registration (`defvjp`, `defvjp_argnum`,
`defvjp_argnums`, `defjvp`, `defjvp_argnum`, `defjvp_argnums`, `def_linear`) filling the
slots of fnad's primitives, `vspace`, and `primitive_vjps`/`primitive_jvps` as views of
those slots. No trace of its own: everything runs on fnad's reverse and forward modes."""

import warnings
from collections import OrderedDict

import fnad.numpy as fnp

from .._ad.transforms import jvp as _jvp
from .._ad.transforms import vjp as _vjp
from .._core.rules import as_primitive
from ._vspaces import ArrayVSpace as ArrayVSpace
from ._vspaces import ComplexArrayVSpace as ComplexArrayVSpace
from ._vspaces import DictVSpace as DictVSpace
from ._vspaces import SequenceVSpace as SequenceVSpace
from ._vspaces import VSpace as VSpace
from ._vspaces import vspace as vspace
from .tracer import primitive as _primitive
from ._util import subval

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "defvjp", "defvjp_argnum",
           "defvjp_argnums", "defjvp", "defjvp_argnum", "defjvp_argnums", "def_linear",
           "primitive_vjps", "primitive_jvps", "SparseObject", "primitive",
           "primitive_with_deprecation_warnings"]


def in_order_of(g, x):
    """`g` (a gradient with `x`'s pytree structure) with every dict in `x`'s key order and
    type: fnad's pytrees sort dict keys, autograd keeps the order of the input."""
    if isinstance(x, dict) and isinstance(g, dict):
        pairs = [(k, in_order_of(g[k], x[k])) for k in x]
        return type(x)(pairs) if type(x) in (dict, OrderedDict) else dict(pairs)
    if isinstance(x, (list, tuple)) and isinstance(g, (list, tuple)) and len(g) == len(x):
        items = [in_order_of(a, b) for a, b in zip(g, x)]
        return type(g)(*items) if hasattr(g, "_fields") else type(g)(items)
    return g


def make_vjp(fun, x):
    """`(vjp, fun(x))` (autograd's order), by fnad.vjp: `vjp(g)` is g's pullback to x."""
    ans, pullback = _vjp(fun, x)

    def vjp(g):
        return in_order_of(pullback(g)[0], x)

    return vjp, ans


def make_jvp(fun, x):
    """`jvp(v) -> (fun(x), J v)`, by fnad.jvp."""
    def jvp(v):
        return _jvp(fun, (x,), (v,))

    return jvp


class _AnyArgument(dict):
    """A primitive's per-argument rule table that makes the rule of any argument number
    on demand (autograd's defvjp_argnum covers every argument with one maker)."""

    def __init__(self, make):
        super().__init__()
        self.make = make

    def get(self, i, default=None):
        return self.make(i)

    def __contains__(self, i):
        return True


def _vjp_rule(maker):
    return lambda g, ans, *args, **kwargs: maker(ans, *args, **kwargs)(g)


def _zero_vjp(i):
    return lambda g, ans, *args, **kwargs: vspace(args[i]).zeros()


def defvjp(fun, *vjpmakers, argnums=None):
    """Register `vjpmaker(ans, *args, **kwargs) -> (g -> cotangent)` per argument (autograd's
    signature; None: the argument gets a zero cotangent). Replaces earlier VJP rules."""
    prim = as_primitive(fun)
    prim.vjps, prim.vjp_all = {}, None
    for i, maker in zip(range(len(vjpmakers)) if argnums is None else argnums, vjpmakers):
        if maker is not None and not callable(maker):
            raise TypeError(f"defvjp: bad VJP {maker!r} for {prim.name}; give a function "
                            "vjpmaker(ans, *args, **kwargs) returning g -> cotangent, or None.")
        prim.vjps[i] = _zero_vjp(i) if maker is None else _vjp_rule(maker)


def defvjp_argnum(fun, vjpmaker):
    """Register `vjpmaker(argnum, ans, args, kwargs) -> (g -> cotangent)` for every argument."""
    prim = as_primitive(fun)
    prim.vjp_all = None
    prim.vjps = _AnyArgument(
        lambda i: lambda g, ans, *args, **kwargs: vjpmaker(i, ans, args, kwargs)(g))


def defvjp_argnums(fun, vjpmaker):
    """Register `vjpmaker(argnums, ans, args, kwargs) -> (g -> cotangents of argnums)`."""
    defvjp_argnum(fun, lambda i, ans, args, kwargs: _first(vjpmaker((i,), ans, args, kwargs)))


def _first(vjp):
    return lambda g: next(iter(vjp(g)))


def _jvp_rule(jvpfun, fun, i):
    if jvpfun is None:
        return lambda g, ans, *args, **kwargs: fnp.zeros_like(ans)
    if jvpfun == "same":
        return lambda g, ans, *args, **kwargs: fun(*subval(args, i, g), **kwargs)
    if callable(jvpfun):
        return jvpfun
    raise TypeError(f"defjvp: bad JVP {jvpfun!r}; give jvp(g, ans, *args, **kwargs), "
                    "'same' (linear in that argument) or None (zero).")


def defjvp(fun, *jvpfuns, argnums=None):
    """Register `jvp(g, ans, *args, **kwargs) -> output tangent` per argument ('same': the
    function is linear in it; None: zero), autograd's signature and fnad's."""
    prim = as_primitive(fun)
    prim.jvps, prim.jvp_all = {}, None
    for i, jvpfun in zip(range(len(jvpfuns)) if argnums is None else argnums, jvpfuns):
        prim.jvps[i] = _jvp_rule(jvpfun, prim.fun, i)


def defjvp_argnum(fun, jvpmaker):
    """Register `jvpmaker(argnum, g, ans, args, kwargs) -> output tangent`, any argument."""
    prim = as_primitive(fun)
    prim.jvp_all = None
    prim.jvps = _AnyArgument(
        lambda i: lambda g, ans, *args, **kwargs: jvpmaker(i, g, ans, args, kwargs))


def defjvp_argnums(fun, jvpmaker):
    """Register `jvpmaker(argnums, gs, ans, args, kwargs) -> output tangent`."""
    defjvp_argnum(fun, lambda i, g, ans, args, kwargs: jvpmaker((i,), (g,), ans, args, kwargs))


def def_linear(fun):
    """Declare `fun` linear in every argument (its JVP applies `fun` to the tangent)."""
    prim = as_primitive(fun)
    prim.jvp_all = None
    prim.jvps = _AnyArgument(lambda i: _jvp_rule("same", prim.fun, i))


class _RuleView:
    """`primitive_vjps` / `primitive_jvps`: the rules of fnad primitives, keyed by function;
    `pop` takes them out (the transform then says the rule is missing) and item assignment
    puts back what `pop` returned."""

    def __init__(self, one, every):
        self.one, self.every = one, every

    def _get(self, fun):
        prim = as_primitive(fun)
        return prim, (getattr(prim, self.one), getattr(prim, self.every))

    def __contains__(self, fun):
        prim, (rules, every) = self._get(fun)
        return bool(rules) or every is not None

    def __getitem__(self, fun):
        prim, saved = self._get(fun)
        if not (saved[0] or saved[1] is not None):
            raise KeyError(fun)
        return saved

    def pop(self, fun, *default):
        try:
            prim, saved = self._get(fun)
        except TypeError:
            if default:
                return default[0]
            raise
        setattr(prim, self.one, {})
        setattr(prim, self.every, None)
        return saved

    def __setitem__(self, fun, saved):
        prim = as_primitive(fun)
        setattr(prim, self.one, saved[0])
        setattr(prim, self.every, saved[1])


primitive_vjps = _RuleView("vjps", "vjp_all")
primitive_jvps = _RuleView("jvps", "jvp_all")


class SparseObject:
    """autograd's sparse cotangent (a vspace and an in-place add): fnad's rules return
    arrays, so a rule returning a SparseObject is refused with this message."""

    def __init__(self, vs, mut_add):
        raise TypeError("fnad.autograd: SparseObject cotangents are autograd-internal; return "
                        "a dense cotangent (e.g. fnad.numpy.at(zeros)[idx].add(g)).")


# autograd's pre-1.2 API, kept there with deprecation warnings: `primitive(f)` gains the
# methods `defvjp(vjp(g, ans, vs, gvs, *args), argnum=0)`, `defgrad(maker(ans, *args),
# argnum=0)` and `defvjp_is_zero(argnums=(0,))`, each mapped onto `defvjp`.
_MSG = ("{} is deprecated (autograd 1.2); write defvjp(fun, vjpmaker) with vjpmaker(ans, "
        "*args) returning g -> cotangent (fnad.autograd.extend.defvjp).")


def _staged(primitive_fun):
    makers = {}

    def register(argnum, maker, what):
        warnings.warn(_MSG.format(what), DeprecationWarning, stacklevel=3)
        makers[argnum] = maker
        nums = sorted(makers)
        defvjp(primitive_fun, *[makers[i] for i in nums], argnums=nums)

    def defvjp_old(vjpfun, argnum=0):
        def maker(ans, *args, **kwargs):
            return lambda g: vjpfun(g, ans, vspace(args[argnum]), vspace(g), *args, **kwargs)
        register(argnum, maker, "primitive.defvjp")

    def defgrad(gradfun, argnum=0):
        register(argnum, gradfun, "primitive.defgrad")

    def defvjp_is_zero(argnums=(0,)):
        for i in argnums:
            register(i, None, "primitive.defvjp_is_zero")

    return defvjp_old, defgrad, defvjp_is_zero


def primitive_with_deprecation_warnings(f_raw):
    """`primitive(f_raw)` with the deprecated registration methods attached."""
    f = _primitive(f_raw)
    f.defvjp, f.defgrad, f.defvjp_is_zero = _staged(f)
    return f


primitive = primitive_with_deprecation_warnings
