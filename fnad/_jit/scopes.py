"""`named_scope`: names for blocks of staged operations, which the pictures group and fold.

Each equation records the scopes open in its thread when it was staged (`Eqn.scope`).
"""

import functools
import threading

__all__ = ["named_scope", "current_scope"]


class _Scopes(threading.local):
    stack = ()  # the open scope names of this thread, outermost first


_scopes = _Scopes()


class _ScopeName(str):
    """A scope name; one object per entry, so two calls of one scope are told apart."""

    __slots__ = ()


def current_scope():
    """The names of the `named_scope`s open in this thread, outermost first."""
    return _scopes.stack


class named_scope:  # used like a function, as a context manager
    """Name the operations staged inside a `with` block, for reading and drawing graphs.

    Equations staged by `jit`/`make_graph` inside the block record the open scope names
    (`Eqn.scope`); `Graph.to_dot` draws each scope as a cluster, folds repeated scopes
    with the same structure, or draws one scope alone (`to_dot(scope="block_2")`). It
    changes nothing else and costs a few hundred nanoseconds when nothing is staged.

    As a decorator, `@fnad.named_scope("attention")` opens the scope on every call.

    Example:
      with fnad.named_scope(f"block_{i}"):
          x = block(params[i], x)
    """

    __slots__ = ("name", "_prev")

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise TypeError(f"named_scope: the name must be a non-empty str, got {name!r}; "
                            "e.g. fnad.named_scope('block_0').")
        self.name = name

    def __enter__(self):
        self._prev = prev = _scopes.stack
        _scopes.stack = prev + (_ScopeName(self.name),)
        return self

    def __exit__(self, *exc):
        _scopes.stack = self._prev
        return False

    def __call__(self, fun):
        name = self.name

        @functools.wraps(fun)
        def scoped(*args, **kwargs):
            prev = _scopes.stack
            _scopes.stack = prev + (_ScopeName(name),)
            try:
                return fun(*args, **kwargs)
            finally:
                _scopes.stack = prev

        return scoped
