"""Structured control flow (JAX's `jax.lax` signatures): scan, cond, while_loop, fori_loop.

Each traces its function(s) once on shapes and dtypes into a program held by one
primitive, so under jit a loop body is staged once, not unrolled, and grad/jvp/jit see a
single differentiable operation.
"""

from ._control import cond as cond
from ._control import fori_loop as fori_loop
from ._control import scan as scan
from ._control import while_loop as while_loop

# Collectives over a named vmap axis (vmap(f, axis_name="i")): fnad/lax/_collectives.py
from ._collectives import all_gather as all_gather
from ._collectives import axis_index as axis_index
from ._collectives import pmax as pmax
from ._collectives import pmean as pmean
from ._collectives import pmin as pmin
from ._collectives import psum as psum
