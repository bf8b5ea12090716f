"""Numerical gradient checking: JAX's `check_grads` and its parts."""

from ._ad.gradcheck import check_grads as check_grads
from ._ad.gradcheck import check_jvp as check_jvp
from ._ad.gradcheck import check_vjp as check_vjp
from ._ad.gradcheck import numerical_jvp as numerical_jvp
