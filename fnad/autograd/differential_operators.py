"""autograd's differential operators, each a thin mapping onto fnad's transforms (through
`make_vjp`/`make_jvp` of fnad.autograd.core, i.e. fnad.vjp and fnad.jvp). All take
`argnum` (autograd's spelling: an int, or a tuple of ints for a tuple of arguments) and
return functions of the original arguments."""

import inspect
import warnings
from collections import OrderedDict

import fnad.numpy as fnp

from .._ad.custom import checkpoint as _checkpoint
from .._ad.jacobians import jacrev as _jacrev
from .._ad.transforms import vjp as _vjp
from .core import make_jvp as _make_jvp
from .core import make_vjp as _make_vjp
from .core import in_order_of, vspace
from .wrap_util import unary_to_nary

__all__ = ["grad", "value_and_grad", "grad_and_aux", "elementwise_grad", "jacobian",
           "hessian", "holomorphic_grad", "hessian_tensor_product", "hessian_vector_product",
           "tensor_jacobian_product", "vector_jacobian_product", "make_vjp", "make_jvp",
           "make_hvp", "make_ggnvp", "make_jvp_reversemode", "deriv", "checkpoint",
           "multigrad_dict", "grad_named"]

make_vjp = unary_to_nary(_make_vjp)
make_jvp = unary_to_nary(_make_jvp)


def _one_value(fname, fun, ans):
    vs = vspace(ans)
    if vs.size != 1:
        shape = getattr(vs, "shape", None)
        raise TypeError(
            f"{fname} only applies to real scalar-output functions, but {fun.__name__} "
            f"returned {'a complex value' if vs.iscomplex else f'shape {shape}'}. Try "
            "jacobian, elementwise_grad or holomorphic_grad (fnad: fnad.jacrev, fnad.vjp, "
            "fnad.grad(..., holomorphic=True)).")
    return vs


@unary_to_nary
def grad(fun, x):
    """
    Returns a function which computes the gradient of `fun` (one real output value: 0-d,
    or any shape of size 1, as autograd allows) with respect to argument `argnum`. The
    gradient has the argument's type (dicts in the argument's key order).

    Example:
      grad(lambda x: np.sum(np.tanh(x) ** 2))(np.ones(3))
    """
    vjp, ans = _make_vjp(fun, x)
    return vjp(_one_value("grad", fun, ans).ones())


@unary_to_nary
def value_and_grad(fun, x):
    """`(fun(*args), grad(fun)(*args))` from one forward pass."""
    vjp, ans = _make_vjp(fun, x)
    return ans, vjp(_one_value("value_and_grad", fun, ans).ones())


@unary_to_nary
def grad_and_aux(fun, x):
    """For `fun` returning `(value, aux)`: `(grad of value, aux)`."""
    ans, pullback, aux = _vjp(lambda x: tuple(fun(x)), x, has_aux=True)
    return in_order_of(pullback(_one_value("grad_and_aux", fun, ans).ones())[0], x), aux


@unary_to_nary
def elementwise_grad(fun, x):
    """The sum of each column of the Jacobian in one reverse pass (the diagonal, when the
    Jacobian is diagonal)."""
    vjp, ans = _make_vjp(fun, x)
    vs = vspace(ans)
    if vs.iscomplex:
        raise TypeError("elementwise_grad only applies to real-output functions; take "
                        "fnad.autograd.numpy.real or abs of the output.")
    return vjp(vs.ones())


@unary_to_nary
def deriv(fun, x):
    """The forward-mode derivative along all-ones (for scalar x: f'(x)), by fnad.jvp."""
    return _make_jvp(fun, x)(vspace(x).ones())[1]


@unary_to_nary
def jacobian(fun, x):
    """The Jacobian, shape `out.shape + x.shape`, by fnad.jacrev."""
    return _jacrev(fun)(x)


@unary_to_nary
def holomorphic_grad(fun, x):
    """f'(z) for holomorphic `fun`: the gradient of its real part (autograd's definition)."""
    if not vspace(x).iscomplex:
        warnings.warn("Input to holomorphic_grad is not complex")
    return grad(lambda x: fnp.real(fun(x)))(x)


def grad_named(fun, argname):
    """The gradient with respect to the argument named `argname`."""
    return grad(fun, list(inspect.signature(fun).parameters).index(argname))


@unary_to_nary
def hessian(fun, x):
    """The exact Hessian: the Jacobian of the Jacobian."""
    return jacobian(jacobian(fun))(x)


@unary_to_nary
def make_hvp(fun, x):
    """`(hvp, grad(fun)(x))`: `hvp(v)` is the Hessian-vector product at x."""
    return _make_vjp(grad(fun), x)


def hessian_tensor_product(fun, argnum=0):
    """A function of `(*args, v)` returning the Hessian (in argument `argnum`) times v."""
    fun_grad = grad(fun, argnum)

    def vector_dot_grad(*args, **kwargs):
        args, v = args[:-1], args[-1]
        return fnp.tensordot(fun_grad(*args, **kwargs), v, fnp.ndim(v))

    return grad(vector_dot_grad, argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """A function of `(*args, v)` returning v times the Jacobian (v's axes contracted with
    the output's)."""
    def vector_dot_fun(*args, **kwargs):
        args, v = args[:-1], args[-1]
        return fnp.tensordot(v, fun(*args, **kwargs), axes=fnp.ndim(v))

    return jacobian(vector_dot_fun, argnum)


vector_jacobian_product = tensor_jacobian_product


@unary_to_nary
def make_jvp_reversemode(fun, x):
    """A Jacobian-vector product by transposing a VJP (the reverse-mode JVP trick)."""
    vjp, y = _make_vjp(fun, x)
    vjp_vjp, _ = _make_vjp(vjp, vspace(y).zeros())
    return vjp_vjp


def make_ggnvp(f, g=lambda x: 1.0 / 2 * fnp.sum(x ** 2, axis=-1), f_argnum=0):
    """Generalized Gauss-Newton-vector products of `g(f(x))` at a point: `ggnvp(v)`."""
    @unary_to_nary
    def _make_ggnvp(f, x):
        f_vjp, f_x = _make_vjp(f, x)
        g_hvp, grad_g_x = _make_vjp(grad(g), f_x)
        f_jvp, _ = _make_vjp(f_vjp, vspace(grad_g_x).zeros())
        return lambda v: f_vjp(g_hvp(f_jvp(v)))

    return _make_ggnvp(f, f_argnum)


def multigrad_dict(fun):
    """A function returning an OrderedDict from each parameter name of `fun` to the gradient
    with respect to it (defaults included)."""
    sig = inspect.signature(fun)
    params = sig.parameters
    kinds = {n: p.kind for n, p in params.items()}

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = OrderedDict(bound.arguments)

        def by_name(values):
            pos, kw = [], {}
            for name, v in values.items():
                if kinds[name] == inspect.Parameter.VAR_POSITIONAL:
                    pos.extend(v)
                elif kinds[name] == inspect.Parameter.VAR_KEYWORD:
                    kw.update(v)
                elif kinds[name] == inspect.Parameter.KEYWORD_ONLY:
                    kw[name] = v
                else:
                    pos.append(v)
            return fun(*pos, **kw)

        g = grad(by_name)(dict(arguments))
        return OrderedDict((name, g[name]) for name in arguments)

    return gradfun


def checkpoint(fun):
    """`fun` with its intermediates recomputed in the backward pass (fnad.checkpoint)."""
    return _checkpoint(fun)
