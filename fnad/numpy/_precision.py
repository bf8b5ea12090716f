"""JAX's `precision=` and `preferred_element_type=` on products (dot, matmul, einsum, ...).

`Precision` lives here so that fnad.numpy's products accept it; fnad.lax re-exports it as
`lax.Precision`. NumPy (and CuPy) multiply in the operands' own dtype, so every precision is
HIGHEST: the argument is validated and otherwise ignored.
"""

import enum

import numpy as np

from .. import numpy as fnp


class Precision(enum.Enum):
    """`jax.lax.Precision`, accepted wherever lax takes `precision=` and otherwise ignored:
    NumPy (and CuPy) multiply in the operands' own dtype, so every value is HIGHEST."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self):
        return self.name


_PRECISION_NAMES = {"default": Precision.DEFAULT, "fastest": Precision.DEFAULT,
                    "bfloat16": Precision.DEFAULT, "high": Precision.HIGH,
                    "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
                    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST}


def check_precision(fname, precision):
    """Validate a `precision=` argument (None, a Precision, its name, or a pair of them)."""
    items = precision if isinstance(precision, (tuple, list)) else (precision,)
    for p in items:
        ok = p is None or isinstance(p, Precision) or (
            isinstance(p, str) and p.lower() in _PRECISION_NAMES)
        if not ok or len(items) > 2:
            raise ValueError(f"{fname}: precision must be None, a lax.Precision, one of "
                             f"{sorted(_PRECISION_NAMES)} or a pair of them, got {p!r}.")


def preferred_operands(fname, operands, precision, preferred_element_type):
    """`operands` as arrays after checking `precision`; converted to `preferred_element_type`
    when one is given, so that the product is computed and returned in that dtype."""
    check_precision(fname, precision)
    if preferred_element_type is None:
        return [fnp.asarray(x) for x in operands]
    try:
        dt = np.dtype(preferred_element_type)
    except TypeError as e:
        raise TypeError(f"{fname}: preferred_element_type must be a dtype or None, got "
                        f"{preferred_element_type!r}.") from e
    return [fnp.asarray(x).astype(dt) for x in operands]
