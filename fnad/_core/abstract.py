"""Abstract values: what a transform may know of an array without reading its numbers.

A `ShapedArray` is a shape, a dtype, whether the dtype is "weak" (it came from a Python
scalar and yields to the other operand's dtype, NEP 50) and the array module (`numpy` or
`cupy`) the array lives in. Every tracer has one (`Tracer.aval`); a staging trace (jit)
has nothing else. Each primitive declares `abstract_eval(*avals_or_consts, **kwargs)`,
which maps the abstract values of its array arguments (other arguments are passed as they
are) to the abstract value of its result, or a tuple of them for several results.
"""

import inspect

import numpy as np

from .backend import backend_of, is_device_array
from .tracer import Tracer

__all__ = ["ShapedArray", "ShapeDtypeStruct", "aval_of", "is_aval", "abstractify", "abstract_eval",
           "AbstractEvalError", "as_avals"]


class AbstractEvalError(TypeError):
    """A primitive's result cannot be known from shapes and dtypes alone."""


class ShapedArray:
    """The abstract value of an array: shape, dtype, weak_type and array module `xp`.

    Example:
      ShapedArray((2, 3), np.float32)          # f32[2,3]
      aval_of(np.ones((2, 3))).shape           # (2, 3)
    """

    __slots__ = ("shape", "dtype", "weak_type", "xp")

    def __init__(self, shape, dtype, weak_type=False, xp=np):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.xp = xp

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def device(self):
        """'cpu' for NumPy, 'gpu' for CuPy."""
        return "cpu" if self.xp is np else "gpu"

    def update(self, shape=None, dtype=None, weak_type=None):
        """A copy with the given fields replaced."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type, self.xp)

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.xp is other.xp)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = "~" if self.weak_type else ""
        where = "" if self.xp is np else "@gpu"
        return f"{weak}{self.dtype.name}[{','.join(map(str, self.shape))}]{where}"


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array that need not exist (JAX's
    `jax.ShapeDtypeStruct`): what `fnad.eval_shape` takes and returns.

    Example:
      fnad.eval_shape(fnp.dot, fnad.ShapeDtypeStruct((2, 3), "float32"), np.ones(3))
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, sharding=None, weak_type=False):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding  # accepted as JAX's; fnad has one device per array

    ndim = ShapedArray.ndim
    size = ShapedArray.size

    def __eq__(self, other):
        return (type(other) is ShapeDtypeStruct and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


_WEAK_DTYPES = {bool: np.dtype(bool), int: np.dtype(np.int_), float: np.dtype(np.float64),
                complex: np.dtype(np.complex128)}


def is_aval(x):
    return type(x) is ShapedArray


def aval_of(x):
    """The abstract value of a tracer, an array or a Python scalar (weakly typed)."""
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, x.dtype)
    if type(x) is ShapeDtypeStruct:
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    backend = backend_of(x)
    if backend is not None:
        return ShapedArray(x.shape, x.dtype, xp=backend.xp)
    dt = _WEAK_DTYPES.get(type(x))
    if dt is not None:
        return ShapedArray((), dt, weak_type=True)
    raise TypeError(f"aval_of: {type(x).__name__} is not an array, a tracer or a Python scalar")


def _is_arraylike(x):
    return isinstance(x, (Tracer, np.ndarray, np.generic)) or is_device_array(x)


def _is_nested_array(x):
    # a constant boolean mask in an index tuple stays concrete: its count of true entries
    # gives the result's shape
    return (isinstance(x, Tracer) or (isinstance(x, np.ndarray) and x.dtype != bool)
            or is_device_array(x))


def abstractify(args):
    """Arrays, NumPy scalars and tracers among `args`, and arrays and tracers in lists/tuples
    among them, as abstract values; everything else (Python scalars, axes, shapes, None, the
    NumPy integers of an axis tuple) is passed as it is."""
    out = []
    for a in args:
        if _is_arraylike(a):
            a = aval_of(a)
        elif isinstance(a, (list, tuple)) and any(_is_nested_array(x) for x in a):
            a = type(a)(aval_of(x) if _is_nested_array(x) else x for x in a)
        out.append(a)
    return out


def abstract_eval(prim, *args, **kwargs):
    """The abstract value(s) of `prim(*args, **kwargs)`, from its `abstract_eval` slot."""
    rule = prim.abstract_eval
    if rule is None:
        raise NotImplementedError(
            f"primitive '{prim.name}' has no abstract_eval rule, so it cannot be staged (jit); "
            "register one with fnad.extend.defabstract_eval, e.g. "
            "defabstract_eval(prim, lambda x: x) for a shape- and dtype-preserving op.")
    return rule(*abstractify(args), **kwargs)


# ----------------------------------------------------------------------------- family helpers
# Rules for whole families of primitives, derived from the backend function itself. Stand-in
# evaluation runs the function on arrays holding no data of their own: zero-strided views of
# one zero (`np.broadcast_to`), or 0-d / size-1 arrays when only the dtype is asked for.

_WEAK_TYPES = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def _standin(a):
    """A zero-strided array with the shape and dtype of aval `a` (a Python scalar if weak)."""
    if a.weak_type and a.shape == ():
        return _WEAK_TYPES.get(a.dtype.kind, float)(0)
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)


def _standins(args, scalar=False):
    out = []
    for a in args:
        if is_aval(a):
            a = _standin(a.update(shape=()) if scalar else a)
        elif isinstance(a, (list, tuple)) and any(is_aval(x) for x in a):
            a = type(a)(_standin(x) if is_aval(x) else x for x in a)
        out.append(a)
    return out


def xp_of(args):
    """The array module of the first abstract value among `args` (NumPy if none)."""
    for a in args:
        if is_aval(a):
            return a.xp
        if isinstance(a, (list, tuple)):
            for x in a:
                if is_aval(x):
                    return x.xp
    return np


def as_avals(out, xp):
    if isinstance(out, (tuple, list)):
        return tuple(as_avals(o, xp) for o in out)
    if isinstance(out, (np.ndarray, np.generic)):
        return ShapedArray(out.shape, out.dtype, xp=xp)
    return ShapedArray((), np.result_type(out), xp=xp)


def _quiet_call(fn, args, kwargs):
    with np.errstate(all="ignore"):
        return fn(*args, **kwargs)


def eval_on_standins(fn, *args, **kwargs):
    """Run `fn` on zero-strided stand-ins of the abstract values among `args`; exact (and
    free) for ops that only rearrange, view or select by position (reshape, transpose,
    basic indexing); do not use it for ops that compute over every element."""
    return as_avals(_quiet_call(fn, _standins(args), kwargs), xp_of(args))


def standin_rule(fn):
    """The abstract evaluation of a view-like `fn`: `fn` itself run on stand-ins."""
    return lambda *args, **kwargs: eval_on_standins(fn, *args, **kwargs)


def broadcast_shapes_of(args):
    """The broadcast shape of the abstract values and constants (scalars, None) in `args`."""
    return np.broadcast_shapes(*[a.shape if is_aval(a) else np.shape(a) for a in args
                                 if a is not None])


def _ufunc_dtype_arg(a):
    if is_aval(a):
        # a weak bool is NumPy's bool (resolve_dtypes takes int/float/complex as weak
        # Python types, not bool, and NEP 50 gives Python's bool no weaker dtype anyway)
        weak = a.weak_type and a.dtype.kind != "b"
        return _WEAK_TYPES.get(a.dtype.kind, a.dtype) if weak else a.dtype
    if type(a) in (int, float, complex):
        return type(a)
    return np.result_type(a)


def ufunc_rule(ufunc):
    """The abstract evaluation of an elementwise NumPy ufunc: broadcast shapes, and the
    dtype NumPy's own type resolution gives (Python scalars weak, as NEP 50 says)."""
    def rule(*args, **kwargs):
        shape = broadcast_shapes_of(args)
        dts = tuple(_ufunc_dtype_arg(a) for a in args) + (None,) * ufunc.nout
        dtype = ufunc.resolve_dtypes(dts)[-1]
        weak = all(a.weak_type if is_aval(a) else type(a) in _WEAK_DTYPES for a in args)
        return ShapedArray(shape, dtype, weak, xp_of(args))
    return rule


def elementwise_rule(fn):
    """The abstract evaluation of an elementwise function that is not a ufunc (np.round,
    np.sinc, ...): broadcast shapes; the dtype from `fn` on 0-d stand-ins."""
    def rule(*args, **kwargs):
        shape = broadcast_shapes_of(args)
        out = _quiet_call(fn, _standins(args, scalar=True), kwargs)
        return ShapedArray(shape, np.result_type(out), xp=xp_of(args))
    return rule


def same_rule(x, *args, **kwargs):
    """The abstract evaluation of an op whose result is shaped and typed like its first
    argument (tril, triu, a fused elementwise kernel)."""
    return x if not x.weak_type else x.update(weak_type=False)


def reduced_shape(shape, axis, keepdims):
    """`shape` reduced over `axis` (None, an int or a tuple; negatives allowed)."""
    nd = len(shape)
    if axis is None:
        axes = set(range(nd))
    else:
        axes = {int(a) % nd if nd else int(a) for a in
                (axis if isinstance(axis, (tuple, list)) else (axis,))}
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def reduction_rule(fn):
    """The abstract evaluation of a reduction `fn(x, axis=None, ..., keepdims=False)`: the
    shape from `axis`/`keepdims`, the dtype from `fn` on a stand-in with every axis of size
    1 (which also checks the axis and dtype arguments as `fn` would)."""
    sig = inspect.signature(fn)

    def rule(x, *args, **kwargs):
        bound = sig.bind(x, *args, **kwargs).arguments
        tiny = np.zeros((1,) * x.ndim, x.dtype)
        where = kwargs.get("where")
        if where is not None:  # a mask broadcasting to x's shape (not to the stand-in's)
            np.broadcast_shapes(where.shape if hasattr(where, "shape") else np.shape(where),
                                x.shape)
            kwargs = dict(kwargs, where=True)
        out = _quiet_call(fn, [tiny, *args], kwargs)
        shape = reduced_shape(x.shape, bound.get("axis"), bool(bound.get("keepdims", False)))
        return ShapedArray(shape, np.result_type(out), xp=x.xp)
    return rule


def dtype_rule(fn):
    """The abstract evaluation of an op that keeps its first argument's shape (cumsum,
    argsort along an axis): the dtype from `fn` on a stand-in with every axis of size 1."""
    def rule(x, *args, **kwargs):
        out = _quiet_call(fn, [np.zeros((1,) * x.ndim, x.dtype), *args], kwargs)
        return ShapedArray(x.shape, np.result_type(out), xp=x.xp)
    return rule


def data_dependent_rule(name, hint=""):
    """The abstract evaluation of an op whose result shape depends on the input's values."""
    def rule(*args, **kwargs):
        raise AbstractEvalError(
            f"{name}: the shape of its result depends on the values of its input, which are "
            "not known while staging (jit); call it outside the staged function" +
            (f", or {hint}" if hint else "") + ".")
    return rule
