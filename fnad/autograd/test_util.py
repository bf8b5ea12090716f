"""autograd.test_util on fnad: `check_grads(f, argnum=0, modes=["fwd", "rev"], order=2)(*args)`
(curried, autograd's signature) compares fnad's forward and reverse derivatives with central
differences along random directions, recursively up to `order`; `check_equivalent`,
`scalar_close`, `check_vjp`, `check_jvp`, `combo_check` as in autograd. fnad's own
`fnad.test_util.check_grads(f, args, order)` is JAX's signature."""

from itertools import product

from .core import make_jvp, make_vjp, vspace
from .wrap_util import get_name, unary_to_nary

__all__ = ["check_grads", "check_vjp", "check_jvp", "check_equivalent", "scalar_close",
           "combo_check", "make_numerical_jvp"]

TOL = 1e-6
RTOL = 1e-6
EPS = 1e-6


def scalar_close(a, b):
    """|a - b| within TOL absolute or RTOL relative to |a + b|."""
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def make_numerical_jvp(f, x):
    """`jvp(v)`: the central difference of f at x along v (step EPS)."""
    y = f(x)
    x_vs, y_vs = vspace(x), vspace(y)

    def jvp(v):
        plus = f(x_vs.add(x, x_vs.scalar_mul(v, EPS / 2)))
        minus = f(x_vs.add(x, x_vs.scalar_mul(v, -EPS / 2)))
        return y_vs.scalar_mul(y_vs.add(plus, y_vs.scalar_mul(minus, -1.0)), 1.0 / EPS)

    return jvp


def check_vjp(f, x):
    """<u, J v> two ways: u's pullback against v, and u against the numerical J v."""
    vjp, y = make_vjp(f, x)
    jvp = make_numerical_jvp(f, x)
    x_vs, y_vs = vspace(x), vspace(y)
    x_v, y_v = x_vs.randn(), y_vs.randn()
    vjp_y = x_vs.covector(vjp(y_vs.covector(y_v)))
    assert vspace(vjp_y) == x_vs, f"VSpace mismatch: {vspace(vjp_y)} vs {x_vs}"
    exact = x_vs.inner_prod(x_v, vjp_y)
    numeric = y_vs.inner_prod(y_v, jvp(x_v))
    assert scalar_close(numeric, exact), (
        f"Derivative (VJP) check of {get_name(f)} failed with arg {x}:\nanalytic: {exact}\n"
        f"numeric:  {numeric}")


def check_jvp(f, x):
    """J v from forward mode against central differences, along a random v."""
    x_v = vspace(x).randn()
    check_equivalent(make_jvp(f, x)(x_v)[1], make_numerical_jvp(f, x)(x_v))


def check_equivalent(x, y):
    """Same vector space, and equal inner products with a random vector."""
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), (
        f"Value mismatch:\nx: {x}\ny: {y}")


@unary_to_nary
def check_grads(f, x, modes=("fwd", "rev"), order=2):
    """Check f's derivatives in argument `argnum` to `order` in `modes`."""
    if not all(m in ("fwd", "rev") for m in modes):
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {modes!r}")
    if "fwd" in modes:
        check_jvp(f, x)
        if order > 1:
            def jvp_f(x, v):
                return make_jvp(f, x)(v)[1]
            jvp_f.__name__ = f"jvp_{get_name(f)}"
            check_grads(jvp_f, (0, 1), modes, order=order - 1)(x, vspace(x).randn())
    if "rev" in modes:
        check_vjp(f, x)
        if order > 1:
            def vjp_f(x, v):
                return make_vjp(f, x)[0](v)
            vjp_f.__name__ = f"vjp_{get_name(f)}"
            check_grads(vjp_f, (0, 1), modes, order=order - 1)(x, vspace(f(x)).randn())


def combo_check(fun, *args, **kwargs):
    """`combo_check(fun, argnums...)(*arg_lists, **kwarg_lists)`: check_grads on every
    combination of the listed arguments and keyword values."""
    def check(*arg_lists, **kwarg_lists):
        pairs = [[(k, v) for v in vs] for k, vs in kwarg_lists.items()]
        for a in product(*arg_lists):
            for kw in product(*pairs):
                check_grads(fun, *args, **kwargs)(*a, **dict(kw))

    return check
