"""autograd.wrap_util: `unary_to_nary` turns an operator on one-argument functions into one
that takes `argnum` (an int, or a tuple of ints for a tuple of arguments)."""

import functools

from ._util import subvals

__all__ = ["unary_to_nary", "wraps", "wrap_nary_f", "get_name", "get_doc"]


def get_name(f):
    return getattr(f, "__name__", "[unknown name]")


def get_doc(f):
    return getattr(f, "__doc__", "")


def wraps(fun, namestr="{fun}", docstr="{doc}", **kwargs):
    """A decorator naming the wrapper after `fun` (best effort, as autograd's)."""
    def deco(f):
        try:
            f.__name__ = namestr.format(fun=get_name(fun), **kwargs)
            f.__doc__ = docstr.format(fun=get_name(fun), doc=get_doc(fun), **kwargs)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError):
            pass
        return f

    return deco


def wrap_nary_f(fun, op, argnum):
    return wraps(fun, "{op}_of_{fun}_wrt_argnum_{argnum}",
                 "    {op} of function {fun} with respect to argument number {argnum}. Takes "
                 "the same arguments as {fun} but returns the {op}.",
                 op=get_name(op), argnum=argnum)


def unary_to_nary(unary_operator):
    """`unary_operator(f, x, *a, **k)` as `op(fun, argnum=0, *a, **k)(*args, **kwargs)`."""
    @functools.wraps(unary_operator)
    def nary_operator(fun, argnum=0, *op_args, **op_kwargs):
        if type(argnum) not in (int, tuple, list):
            raise TypeError(f"{get_name(unary_operator)}: argnum must be an int or a tuple of "
                            f"ints, got {argnum!r}; fnad.autograd spells it argnum= as "
                            "autograd does (fnad.grad spells it argnums=).")

        @wrap_nary_f(fun, unary_operator, argnum)
        def nary_f(*args, **kwargs):
            def unary_f(x):
                sub = subvals(args, [(argnum, x)] if isinstance(argnum, int)
                              else zip(argnum, x))
                return fun(*sub, **kwargs)

            unary_f.__name__ = get_name(fun)
            x = args[argnum] if isinstance(argnum, int) else tuple(args[i] for i in argnum)
            return unary_operator(unary_f, x, *op_args, **op_kwargs)

        return nary_f

    return nary_operator
