"""Pytree paths (JAX's key paths): how each leaf is reached from the root, as a tuple of
`DictKey`, `SequenceKey`, `GetAttrKey` or `FlattenedIndexKey`; `Partial`, a pytree
`functools.partial`; `register_pytree_with_keys` and `register_pytree_node_class`."""

import dataclasses
import functools
from collections import OrderedDict, defaultdict

from .tree import (DATA_FIELDS, _node_handler, _sorted_keys, leaves_like, register_pytree_node,
                   tree_flatten)

__all__ = ["DictKey", "SequenceKey", "GetAttrKey", "FlattenedIndexKey", "keystr",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "register_pytree_with_keys", "register_pytree_node_class", "Partial"]


@dataclasses.dataclass(frozen=True)
class DictKey:
    """The key of a mapping's child: `str` gives "['name']"."""
    key: object

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """The index of a list's or tuple's child: `str` gives "[0]"."""
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """The attribute of a namedtuple's or dataclass's child: `str` gives ".name"."""
    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """The position of a child of a node registered without keys."""
    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def _simple(k):
    for attr in ("key", "idx", "name"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k)


def keystr(keys, *, simple=False, separator="/"):
    """A path as a string: "['layer'][0].w", or with `simple=True` "layer/0/w".

    Example:
      [keystr(p) for p, _ in tree_flatten_with_path({"a": [1, 2]})[0]]   # ["['a'][0]", ...]
    """
    if simple:
        return separator.join(_simple(k) for k in keys)
    return "".join(str(k) for k in keys)


_with_keys = {}  # type -> flatten_with_keys: node -> ([(key, child)], aux)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    """Register a container whose children have keys (JAX's `register_pytree_with_keys`).

    Args:
      flatten_with_keys: `node -> ([(key, child), ...], aux_data)`.
      unflatten_func: `(aux_data, children) -> node`.
      flatten_func: `node -> (children, aux_data)`; derived from flatten_with_keys if None.
    """
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _with_keys[nodetype] = flatten_with_keys


def register_pytree_node_class(cls):
    """Class decorator: register `cls` by its `tree_flatten` method and `tree_unflatten`
    classmethod (JAX's `register_pytree_node_class`)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def _keys(x, children, aux):
    """The keys of `x`'s children."""
    t = type(x)
    if t in _with_keys:
        return [k for k, _ in _with_keys[t](x)[0]]
    if t in (dict, OrderedDict, defaultdict):
        names = list(x) if t is OrderedDict else _sorted_keys(x)
        return [DictKey(k) for k in names]
    if t in (list, tuple):
        return [SequenceKey(i) for i in range(len(children))]
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        return [GetAttrKey(f) for f in t._fields]
    if t in DATA_FIELDS:
        return [GetAttrKey(n) for n in DATA_FIELDS[t]]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def _paths(x, is_leaf, path, out):
    stack = [(x, path)]
    while stack:  # a loop, not recursion: any depth
        x, path = stack.pop()
        if is_leaf is not None and is_leaf(x):
            out.append(path)
            continue
        h = _node_handler(x)
        if h is None:
            out.append(path)
            continue
        children, aux = h[0](x)
        children = list(children)
        keys = _keys(x, children, aux)
        stack.extend((c, path + (k,)) for k, c in reversed(list(zip(keys, children))))


def tree_flatten_with_path(tree, is_leaf=None):
    """`([(path, leaf), ...], treedef)`: each leaf with the keys that reach it.

    Example:
      pairs, _ = tree_flatten_with_path({"w": w, "b": [b0, b1]})
      [keystr(p) for p, _ in pairs]           # ["['b'][0]", "['b'][1]", "['w']"]
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths = []
    _paths(tree, is_leaf, (), paths)
    return list(zip(paths, leaves)), treedef


def tree_leaves_with_path(tree, is_leaf=None):
    """`[(path, leaf), ...]` in flattening order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f, tree, *rest, is_leaf=None):
    """`tree_map` whose `f` also receives each leaf's path first: `f(path, x, *xs)`.

    Example:
      tree_map_with_path(lambda p, x: 0 if keystr(p).endswith("['b']") else x, params)
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = leaves_like(treedef, rest, is_leaf, "tree_map_with_path")
    leaves = [x for _, x in pairs]
    return treedef.unflatten([f(p, *xs) for (p, _), xs in zip(pairs, zip(leaves, *others))])


class Partial(functools.partial):
    """A `functools.partial` that is a pytree: its bound arguments are children, the
    function is static (JAX's `tree_util.Partial`), so it can be passed into and returned
    from jit, vmap and grad.

    Example:
      f = Partial(fnp.multiply, 2.0)
      fnad.jit(lambda g, x: g(x))(f, 3.0)     # 6.0
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):  # flatten nested partials into one
            args, kw = func.args + args, {**func.keywords, **kw}
            func = func.func
        return super().__new__(cls, func, *args, **kw)


register_pytree_with_keys(
    Partial,
    lambda p: ([(SequenceKey(i), a) for i, a in enumerate(p.args)]
               + [(DictKey(k), p.keywords[k]) for k in sorted(p.keywords)], (p.func, len(p.args),
                                                                             sorted(p.keywords))),
    lambda aux, c: Partial(aux[0], *c[:aux[1]], **dict(zip(aux[2], c[aux[1]:]))))
