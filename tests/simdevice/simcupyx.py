"""The simulated device's `cupyx`: the parts fnad may use.

`scipy.special` (SciPy's functions under CuPy's rules), `scatter_add` (which CuPy >= 12
deprecates in favour of `cupy.add.at`: it warns here as it does there) and
`allow_synchronize(False)`, which makes every host-device transfer raise.
"""

import types
import warnings

from . import simcupy
from ._transfers import no_transfers

scipy = types.SimpleNamespace(special=simcupy.special)


def scatter_add(a, slices, value):
    """`a[slices] += value` with repeated indices accumulating (cupyx.scatter_add)."""
    warnings.warn("`ndarray.scatter_add` is deprecated. Please use `cupy.add.at` instead.",
                  DeprecationWarning, stacklevel=2)
    simcupy.add.at(a, slices, value)


def allow_synchronize(allow):
    """A context in which host-device transfers raise unless `allow` (as on a GPU)."""
    return no_transfers() if not allow else _nothing()


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
