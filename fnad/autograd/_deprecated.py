"""autograd's deprecated `util.quick_grad_check` (before autograd 1.2), with a warning naming
the current spelling."""

import warnings

from .test_util import check_grads

__all__ = ["quick_grad_check"]


def quick_grad_check(fun, arg0, extra_args=(), kwargs=None, verbose=True, eps=1e-4,
                     rtol=1e-4, atol=1e-6, rs=None):
    """Deprecated: a first-order reverse-mode check_grads of `fun(arg0, *extra_args)`."""
    warnings.warn("quick_grad_check is deprecated; use fnad.autograd.test_util.check_grads.",
                  DeprecationWarning, stacklevel=2)
    check_grads(lambda a: fun(a, *extra_args, **(kwargs or {})), modes=["rev"], order=1)(arg0)
