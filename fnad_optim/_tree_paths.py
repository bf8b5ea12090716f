"""optax.tree_utils' lookups by name in optimizer states: `tree_get`, `tree_get_all_with_path`
and `tree_set` find NamedTuple fields, dict keys and NamedTuple classes by name (e.g. the
injected `learning_rate`, or `count`), with paths of `NamedTupleKey`s, dict keys and
indices."""

import dataclasses

__all__ = ["NamedTupleKey", "tree_get_all_with_path", "tree_get", "tree_set"]


@dataclasses.dataclass(frozen=True)
class NamedTupleKey:
    """A path entry: the field `name` of a NamedTuple of class `tuple_name`."""

    tuple_name: str
    name: str

    def __str__(self):
        return f"{self.tuple_name}.{self.name}"


def _is_named_tuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _children(path, node):
    """(path entry, child) of a NamedTuple, dict, tuple or list; none for a leaf."""
    if _is_named_tuple(node):
        return [(NamedTupleKey(type(node).__name__, f), getattr(node, f)) for f in node._fields]
    if isinstance(node, dict):
        return list(node.items())
    if isinstance(node, (tuple, list)):
        return list(enumerate(node))
    return []


def _name(entry):
    return entry.name if isinstance(entry, NamedTupleKey) else entry


def _find(node, key, path, out):
    if _is_named_tuple(node) and type(node).__name__ == key:
        out.append((path, node))
        return
    for entry, child in _children(path, node):
        if not isinstance(entry, int) and _name(entry) == key:
            out.append(((*path, entry), child))
        else:
            _find(child, key, (*path, entry), out)


def tree_get_all_with_path(tree, key, filtering=None):
    """Every `(path, value)` in `tree` whose last path entry is named `key` (a NamedTuple
    field or dict key), or whose value is a NamedTuple of class `key`, kept if
    `filtering(path, value)` (when given) holds.

    Example:
      tree_get_all_with_path(opt_state, "count")
    """
    out = []
    _find(tree, key, (), out)
    return [(p, v) for p, v in out if filtering is None or filtering(p, v)]


def tree_get(tree, key, default=None, filtering=None):
    """The one value named `key` in `tree` (see `tree_get_all_with_path`), `default` if
    none; a KeyError if several.

    Example:
      lr = tree_get(opt_state, "learning_rate")   # an inject_hyperparams state
    """
    found = tree_get_all_with_path(tree, key, filtering)
    if len(found) > 1:
        raise KeyError(f"tree_get: found {len(found)} values named {key!r}, at "
                       f"{[tuple(map(str, p)) for p, _ in found]}; pass filtering= to pick one.")
    return found[0][1] if found else default


def _set(node, path, filtering, values):
    def wanted(p, v, name):
        return name in values and (filtering is None or filtering(p, v))

    if _is_named_tuple(node) and wanted(path, node, type(node).__name__):
        return values[type(node).__name__]
    children = _children(path, node)
    if not children:
        return node
    new = []
    for entry, child in children:
        p = (*path, entry)
        if not isinstance(entry, int) and wanted(p, child, _name(entry)):
            new.append(values[_name(entry)])
        else:
            new.append(_set(child, p, filtering, values))
    if _is_named_tuple(node):
        return type(node)(*new)
    if isinstance(node, dict):
        return type(node)(zip(node.keys(), new))
    return type(node)(new)


def tree_set(tree, filtering=None, /, **kwargs):
    """`tree` with the values named by the keywords replaced (NamedTuple fields, dict keys,
    or whole NamedTuples by class name), where `filtering(path, value)` (when given) holds;
    a KeyError if a name is not found.

    Example:
      opt_state = tree_set(opt_state, learning_rate=1e-4)
    """
    for key in kwargs:
        if not tree_get_all_with_path(tree, key, filtering):
            raise KeyError(f"tree_set: found no value named {key!r}"
                           f"{' matching the filtering' if filtering else ''} in the tree.")
    return _set(tree, (), filtering, kwargs)
