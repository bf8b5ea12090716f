"""autograd's vector spaces (`vspace(x)`), written on fnad.numpy so that they work on traced
values: the zeros, ones, basis and random vectors of a value's space and the inner product
that autograd's check_grads and differential operators use. Arrays (real or complex), tuples,
lists, dicts and NumPy's linalg result tuples have one."""

import numpy as onp

import fnad.numpy as fnp

from .._ad.values import shape_dtype
from .._core.tracer import Tracer

__all__ = ["VSpace", "ArrayVSpace", "ComplexArrayVSpace", "SequenceVSpace", "DictVSpace",
           "vspace"]


class VSpace:
    """The vector space of a value (autograd's VSpace): subclass it and `register` a type."""

    __slots__ = ()
    mappings = {}
    iscomplex = False

    def __init__(self, value):
        pass

    def add(self, x, y):
        return self._add(x, y)

    def scalar_mul(self, x, a):
        return self._scalar_mul(x, a)

    def inner_prod(self, x, y):
        return self._inner_prod(x, y)

    def covector(self, x):
        return self._covector(x)

    def mut_add(self, x, y):
        return self._add(x, y)

    def _add(self, x, y):
        return x + y

    def _mut_add(self, x, y):
        return self._add(x, y)

    def _scalar_mul(self, x, a):
        return x * a

    def _covector(self, x):
        return x

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self), repr(self._key())))

    def _key(self):
        return tuple(sorted(getattr(self, "__dict__", {}).items()))

    def __repr__(self):
        return f"{type(self).__name__}_{self._key()}"

    @classmethod
    def register(cls, value_type, vspace_maker=None):
        VSpace.mappings[value_type] = vspace_maker or cls


class ArrayVSpace(VSpace):
    """A real array's space (shape, dtype)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, value):
        self.shape, self.dtype = shape_dtype(value)

    def _key(self):
        return (self.shape, self.dtype)

    @property
    def size(self):
        return int(onp.prod(self.shape))

    @property
    def ndim(self):
        return len(self.shape)

    def zeros(self):
        return onp.zeros(self.shape, self.dtype)

    def ones(self):
        return onp.ones(self.shape, self.dtype)

    def standard_basis(self):
        for idx in onp.ndindex(*self.shape):
            v = onp.zeros(self.shape, self.dtype)
            v[idx] = 1
            yield v

    def randn(self):
        return onp.array(onp.random.randn(*self.shape)).astype(self.dtype)

    def _inner_prod(self, x, y):
        return fnp.dot(fnp.ravel(x), fnp.ravel(y))


class ComplexArrayVSpace(ArrayVSpace):
    """A complex array's space: twice the real dimensions; the inner product is Re<x, y>."""

    __slots__ = ()
    iscomplex = True

    @property
    def size(self):
        return 2 * int(onp.prod(self.shape))

    def ones(self):
        return onp.ones(self.shape, self.dtype) * (1 + 1j)

    def standard_basis(self):
        for idx in onp.ndindex(*self.shape):
            for unit in (1.0, 1.0j):
                v = onp.zeros(self.shape, self.dtype)
                v[idx] = unit
                yield v

    def randn(self):
        re, im = onp.random.randn(*self.shape), onp.random.randn(*self.shape)
        return onp.array(re).astype(self.dtype) + 1j * onp.array(im).astype(self.dtype)

    def _inner_prod(self, x, y):
        return fnp.real(fnp.dot(fnp.conj(fnp.ravel(x)), fnp.ravel(y)))

    def _covector(self, x):
        return fnp.conj(x)


class SequenceVSpace(VSpace):
    """A tuple's or list's space: the product of its items' spaces."""

    __slots__ = ("shape", "seq_type")

    def __init__(self, value):
        self.seq_type = type(value)
        self.shape = [vspace(v) for v in value]

    def _key(self):
        return (self.seq_type, tuple(self.shape))

    def _make(self, items):
        items = list(items)
        if self.seq_type in (tuple, list):
            return self.seq_type(items)
        return self.seq_type(*items)  # a named tuple

    @property
    def size(self):
        return sum(s.size for s in self.shape)

    def zeros(self):
        return self._make(s.zeros() for s in self.shape)

    def ones(self):
        return self._make(s.ones() for s in self.shape)

    def randn(self):
        return self._make(s.randn() for s in self.shape)

    def standard_basis(self):
        for i, s in enumerate(self.shape):
            for v in s.standard_basis():
                yield self._make(v if j == i else t.zeros() for j, t in enumerate(self.shape))

    def _add(self, xs, ys):
        return self._make(s._add(x, y) for s, x, y in zip(self.shape, xs, ys))

    def _scalar_mul(self, xs, a):
        return self._make(s._scalar_mul(x, a) for s, x in zip(self.shape, xs))

    def _inner_prod(self, xs, ys):
        return sum(s._inner_prod(x, y) for s, x, y in zip(self.shape, xs, ys))

    def _covector(self, xs):
        return self._make(s._covector(x) for s, x in zip(self.shape, xs))


class DictVSpace(VSpace):
    """A dict's space, keys in the dict's own order (autograd's)."""

    __slots__ = ("shape", "dict_type")

    def __init__(self, value):
        self.dict_type = type(value)
        self.shape = {k: vspace(v) for k, v in value.items()}

    def _key(self):
        return (self.dict_type, tuple(self.shape.items()))

    def _make(self, pairs):
        return self.dict_type(pairs)

    @property
    def size(self):
        return sum(s.size for s in self.shape.values())

    def zeros(self):
        return self._make((k, s.zeros()) for k, s in self.shape.items())

    def ones(self):
        return self._make((k, s.ones()) for k, s in self.shape.items())

    def randn(self):
        return self._make((k, s.randn()) for k, s in self.shape.items())

    def standard_basis(self):
        for k, s in self.shape.items():
            for v in s.standard_basis():
                yield self._make((j, v if j == k else t.zeros()) for j, t in self.shape.items())

    def _add(self, xs, ys):
        return self._make((k, s._add(xs[k], ys[k])) for k, s in self.shape.items())

    def _scalar_mul(self, xs, a):
        return self._make((k, s._scalar_mul(xs[k], a)) for k, s in self.shape.items())

    def _inner_prod(self, xs, ys):
        return sum(s._inner_prod(xs[k], ys[k]) for k, s in self.shape.items())

    def _covector(self, xs):
        return self._make((k, s._covector(xs[k])) for k, s in self.shape.items())


def _array_space(x):
    return ComplexArrayVSpace(x) if shape_dtype(x)[1].kind == "c" else ArrayVSpace(x)


def vspace(value):
    """The vector space of `value` (autograd's `vspace`)."""
    maker = VSpace.mappings.get(type(value))
    if maker is not None:
        return maker(value)
    if isinstance(value, Tracer) or isinstance(value, onp.ndarray):
        return _array_space(value)
    if isinstance(value, (tuple, list)):  # named tuples (NumPy's linalg results) too
        return SequenceVSpace(value)
    if isinstance(value, dict):
        return DictVSpace(value)
    if isinstance(value, onp.generic) and value.dtype.kind in "fc":
        return _array_space(value)
    raise TypeError(f"Can't find vector space for value {value!r:.60} of type "
                    f"{type(value).__name__}. Valid types are arrays, real and complex numbers, "
                    "tuples, lists and dicts of them.")


for _t in (float, onp.float64, onp.float32, onp.float16, onp.longdouble):
    ArrayVSpace.register(_t)
for _t in (complex, onp.complex128, onp.complex64, onp.clongdouble):
    ComplexArrayVSpace.register(_t)
for _t in (tuple, list):
    SequenceVSpace.register(_t)
DictVSpace.register(dict)
