"""Structured control flow (JAX's `jax.lax` signatures): scan, cond, while_loop, fori_loop.

Each traces its function(s) once on shapes and dtypes into a program held by one
primitive, so under jit a loop body is staged once, not unrolled, and grad/jvp/jit see a
single differentiable operation.
"""

from ._control import cond as cond
from ._control import fori_loop as fori_loop
from ._control import scan as scan
from ._control import while_loop as while_loop
