"""Pytrees: nested containers of leaves, flattened and rebuilt.

Registered node types are dict, list, tuple, namedtuples, None, dataclass
instances, and any class given to `register_pytree_node` (JAX's two-function
registration). Everything else is a leaf.
"""

import dataclasses
import functools
from collections import OrderedDict, defaultdict

__all__ = ["register_pytree_node", "register_dataclass", "tree_flatten", "tree_unflatten",
           "tree_leaves", "tree_structure", "tree_map", "PyTreeDef", "treedef_is_leaf",
           "tree_all", "tree_reduce", "tree_transpose", "leaf_path"]

_registry = {}
_handlers = {}  # every type seen: its (flatten, unflatten) pair, or None for leaves


def register_pytree_node(nodetype, flatten_func, unflatten_func):
    """Register a container type.

    Args:
      nodetype: the class.
      flatten_func: `node -> (children, aux_data)`; children is an iterable.
      unflatten_func: `(aux_data, children) -> node`.

    Example:
      register_pytree_node(Point, lambda p: ((p.x, p.y), None), lambda _, c: Point(*c))
    """
    _registry[nodetype] = (flatten_func, unflatten_func)
    _handlers[nodetype] = _registry[nodetype]


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], tuple(keys)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(dict, _flatten_dict, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda n: ((), None), lambda _, c: None)
register_pytree_node(OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: OrderedDict(zip(keys, c)))
register_pytree_node(defaultdict, lambda d: (_flatten_dict(d)[0], (d.default_factory,
                                                                  _flatten_dict(d)[1])),
                     lambda aux, c: defaultdict(aux[0], zip(aux[1], c)))


DATA_FIELDS = {}  # registered dataclass -> the names of its child fields


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: `data_fields` are children, `meta_fields` static aux data
    (JAX's signature; usable as a plain decorator). With neither given, the init fields
    are children except those with `field(metadata={"static": True})`.

    Example:
      register_dataclass(Params, data_fields=["w", "b"], meta_fields=["name"])
    """
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields, drop_fields)
    if data_fields is None and meta_fields is None:
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    if data_fields is None or meta_fields is None:
        raise TypeError(f"register_dataclass({nodetype.__name__}): give both data_fields and "
                        "meta_fields, or neither (then they come from the dataclass fields).")
    data, meta = tuple(data_fields), tuple(meta_fields)
    # no meta fields: aux None, as before, so a checkpoint stores the node as plain fields
    register_pytree_node(nodetype, lambda x: ([getattr(x, n) for n in data],
                                              tuple(getattr(x, n) for n in meta) or None),
                         lambda aux, c: nodetype(**dict(zip(data, c)),
                                                 **dict(zip(meta, aux or ()))))
    DATA_FIELDS[nodetype] = data
    return nodetype


def _namedtuple_handler(t):
    return (lambda nt: (tuple(nt), None)), (lambda _, c: t(*c))


def _node_handler(x):
    t = type(x)
    try:
        return _handlers[t]
    except KeyError:
        pass
    h = _registry.get(t)
    if h is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        h = _namedtuple_handler(t)
    elif h is None and dataclasses.is_dataclass(t):
        register_dataclass(t)
        h = _registry[t]
    _handlers[t] = h
    return h


class PyTreeDef:
    """The structure of a pytree: node type, aux data and child structures."""

    __slots__ = ("node_type", "aux", "children", "num_leaves")

    def __init__(self, node_type, aux, children, num_leaves=None):
        self.node_type = node_type
        self.aux = aux
        self.children = children
        if num_leaves is None:
            num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)
        self.num_leaves = num_leaves

    def __eq__(self, other):
        pairs = [(self, other)]  # a loop, not recursion: any depth
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if not (isinstance(b, PyTreeDef) and a.node_type is b.node_type
                    and a.num_leaves == b.num_leaves and len(a.children) == len(b.children)
                    and _aux_eq(a.aux, b.aux)):
                return False
            pairs.extend(zip(a.children, b.children))
        return True

    def __hash__(self):
        return hash((self.node_type, len(self.children)))

    def __repr__(self):
        return f"PyTreeDef({self._show()})"

    def _show(self, depth=0):
        if self.node_type is None:
            return "*"
        if depth > _SHOW_DEPTH:
            return "..."
        inner = [c._show(depth + 1) for c in self.children]
        t = self.node_type
        if t is tuple:
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        if t is list:
            return "[" + ", ".join(inner) + "]"
        if t is dict:
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.aux, inner)) + "}"
        if t is type(None):
            return "None"
        return f"{t.__name__}(" + ", ".join(inner) + ")"

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this structure's leaves, in order."""
        return _flatten_up_to(self, tree)


def _child_key(node, j):
    """How child `j` of `node` is reached: "['key']" for mappings, "[j]" for sequences,
    ".field" for namedtuples and dataclasses."""
    t, aux = node.node_type, node.aux
    if t in (dict, OrderedDict):
        return f"[{aux[j]!r}]"
    if t is defaultdict:
        return f"[{aux[1][j]!r}]"
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        return f".{t._fields[j]}"
    if t in DATA_FIELDS:
        names = DATA_FIELDS[t]
        if j < len(names):
            return f".{names[j]}"
    return f"[{j}]"


def leaf_path(treedef, i):
    """The keys leading to leaf `i` of `treedef`, as strings (e.g. ["[0]", "['layer']",
    "['name']"]), for error messages."""
    keys, node = [], treedef
    while node.node_type is not None:
        for j, child in enumerate(node.children):
            if i < child.num_leaves:
                keys.append(_child_key(node, j))
                node = child
                break
            i -= child.num_leaves
        else:  # pragma: no cover - i out of range
            break
    return keys


def _aux_eq(a, b):
    try:
        return bool(a == b)
    except Exception:  # arrays in aux data
        return a is b


_LEAF = PyTreeDef(None, None, ())
_SHOW_DEPTH = 50  # deeper structure prints as "..."
# Flatten and unflatten recurse (fastest for the usual shallow trees) down to this depth,
# then go on with an explicit stack, so that any depth works without RecursionError.
_RECURSION_DEPTH = 100


def treedef_is_leaf(treedef):
    return treedef.node_type is None


def _flatten(x, is_leaf, leaves, depth=0):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is list or t is tuple:  # the common containers skip the handler table
        children, aux = x, None
    elif t is dict:
        children, aux = _flatten_dict(x)
    else:
        h = _handlers.get(t, False)
        if h is False:
            h = _node_handler(x)
        if h is None:
            leaves.append(x)
            return _LEAF
        children, aux = h[0](x)
    start = len(leaves)
    kids = []
    for c in children:
        if is_leaf is None and _handlers.get(type(c), False) is None:  # a known leaf type
            leaves.append(c)
            kids.append(_LEAF)
        elif depth < _RECURSION_DEPTH:
            kids.append(_flatten(c, is_leaf, leaves, depth + 1))
        else:
            kids.append(_flatten_deep(c, is_leaf, leaves))
    return PyTreeDef(t, aux, tuple(kids), len(leaves) - start)


def _open_node(x, is_leaf, leaves):
    """`_LEAF` (after appending `x` to `leaves`) or a frame [type, aux, children iterator,
    child treedefs, leaf count at the start] for `_flatten_deep`."""
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    h = _node_handler(x)
    if h is None:
        leaves.append(x)
        return _LEAF
    children, aux = h[0](x)
    return [type(x), aux, iter(children), [], len(leaves)]


def _flatten_deep(x, is_leaf, leaves):
    """`_flatten` with an explicit stack instead of recursion."""
    frame = _open_node(x, is_leaf, leaves)
    if frame is _LEAF:
        return _LEAF
    stack = [frame]
    while True:
        frame = stack[-1]
        for c in frame[2]:
            child = _open_node(c, is_leaf, leaves)
            if child is _LEAF:
                frame[3].append(_LEAF)
            else:
                stack.append(child)
                break
        else:
            stack.pop()
            t, aux, _, kids, start = frame
            td = PyTreeDef(t, aux, tuple(kids), len(leaves) - start)
            if not stack:
                return td
            stack[-1][3].append(td)


def tree_flatten(tree, is_leaf=None):
    """Flatten a pytree into `(leaves, treedef)`.

    Example:
      leaves, treedef = tree_flatten({"w": w, "b": b})   # leaves == [b, w]
    """
    leaves = []
    treedef = _flatten(tree, is_leaf, leaves)
    return leaves, treedef


def _unflatten(treedef, it, depth=0):
    t = treedef.node_type
    if t is None:
        return next(it)
    if depth >= _RECURSION_DEPTH:
        return _unflatten_deep(treedef, it)
    children = [next(it) if c.node_type is None else _unflatten(c, it, depth + 1)
                for c in treedef.children]
    return _build(treedef, children)


def _unflatten_deep(treedef, it):
    """`_unflatten` with an explicit stack instead of recursion."""
    stack = [(treedef, iter(treedef.children), [])]
    while True:
        td, kids, built = stack[-1]
        for c in kids:
            if c.node_type is None:
                built.append(next(it))
            else:
                stack.append((c, iter(c.children), []))
                break
        else:
            stack.pop()
            node = _build(td, built)
            if not stack:
                return node
            stack[-1][2].append(node)


def _build(treedef, children):
    t = treedef.node_type
    if t is list:
        return children
    if t is tuple:
        return tuple(children)
    if t is dict:
        return dict(zip(treedef.aux, children))
    h = _handlers.get(t)
    if h is None:
        raise TypeError(f"tree_unflatten: unregistered node type {t.__name__}")
    return h[1](treedef.aux, children)


def tree_unflatten(treedef, leaves):
    """Rebuild a pytree of structure `treedef` from `leaves`."""
    leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: structure {treedef} needs {treedef.num_leaves} "
                         f"leaves, got {len(leaves)}")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree, is_leaf=None):
    """The leaves of a pytree, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The `PyTreeDef` of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply `f` to corresponding leaves of `tree` and each tree in `rest`.

    Example:
      tree_map(lambda p, g: p - 0.1 * g, params, grads)
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = leaves_like(treedef, rest, is_leaf, "tree_map")
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def leaves_like(treedef, rest, is_leaf, fname):
    """The leaves of each tree in `rest`, each checked to have the structure `treedef`."""
    others = []
    for i, r in enumerate(rest):
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"{fname}: tree structures differ:\n"
                             f"  tree 0:       {treedef}\n  tree {i + 1}:       {r_def}")
        others.append(r_leaves)
    return others


def tree_all(tree):
    """True if every leaf is truthy."""
    return all(tree_leaves(tree))


_NO_INITIALIZER = object()


def tree_reduce(function, tree, initializer=_NO_INITIALIZER, is_leaf=None):
    """Reduce the leaves with a binary function, like functools.reduce.

    Example:
      tree_reduce(operator.add, {"a": 1, "b": [2, 3]})     # 6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    """Turn an outer-of-inner tree into an inner-of-outer tree (`inner_treedef` None: the
    structure of the first inner tree).

    Example:
      tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)), [(1, 2), (3, 4)])
      # ([1, 3], [2, 4])
    """
    flat = _flatten_up_to(outer_treedef, pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0]) if flat else tree_structure(None)
    inner_leaves = [tree_flatten(x)[0] for x in flat]
    for x in flat:
        if tree_structure(x) != inner_treedef:
            raise ValueError(f"tree_transpose: expected inner structure {inner_treedef}, got "
                             f"{tree_structure(x)}")
    cols = list(zip(*inner_leaves)) if inner_leaves else []
    return inner_treedef.unflatten([outer_treedef.unflatten(c) for c in cols])


def _flatten_up_to(treedef, tree):
    out = []

    def go(td, x):
        if td.node_type is None:
            out.append(x)
            return
        children, _ = _node_handler(x)[0](x)
        for c_td, c in zip(td.children, children):
            go(c_td, c)

    go(treedef, tree)
    return out
