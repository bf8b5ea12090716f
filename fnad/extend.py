"""Writing your own primitives: wrap a backend function, then register its rules.

Example:
  from fnad.extend import primitive, defvjp, defjvp
  import fnad.numpy as fnp

  def _softsign(x):                       # runs on plain NumPy/CuPy arrays
      return x / (1 + abs(x))
  softsign = primitive(_softsign)
  defvjp(softsign, lambda g, ans, x: g / (1 + fnp.abs(x)) ** 2)
  defjvp(softsign, lambda t, ans, x: t / (1 + fnp.abs(x)) ** 2)

A VJP rule `rule(g, ans, *args, **kwargs)` returns the cotangent of one argument;
a JVP rule `rule(t, ans, *args, **kwargs)` returns the tangent of the output
contributed by one argument's tangent `t`. An abstract evaluation
`rule(*avals_or_consts, **kwargs)` maps the ShapedArrays of the array arguments (other
arguments come as they are) to the result's ShapedArray, e.g.
`defabstract_eval(softsign, lambda x: x)`. Rules written with `fnad.numpy` are
themselves differentiable, so higher derivatives work.

Batching (fnad.vmap): `defbatch(fun, rule)` registers `rule(args, dims, **kwargs) ->
(out, out_dim)`; register it right under the primitive's other rules. Family helpers build
rules (each takes the primitive or its function): `elementwise_batch(prim)`,
`axis_batch(prim)` (reductions along `axis`), `stack_batch(prim)` (ops on stacks of
matrices), `keep_batch(prim)` (elementwise in the first argument only), `lead_batch(prim, nb)`
(kernels on the last axis whose first `nb` arguments broadcast), `image_batch(prim)` (NCHW
kernels: the batch folds into N), `like_batch(prim)` (zeros_like and kin), `tri_batch(prim)`
(tril/triu) and `loop_batch(prim)` (independent examples, a random draw per key, run once
each), with `to_front`, `all_to_front`, `batch_size`, `logical_ndim` and `batch_fallback`
(the loop over the batch, with a warning) for writing your own. Example:
  defbatch(softsign, elementwise_batch(softsign))

Also exported for code above the core (fnad_nn, fnad_optim, your own primitives):
`array_module` (numpy or cupy, by the arrays given), `unbroadcast`, `shape`, `ndim`,
`dtype_of`, `norm_axes`, and `PRIMITIVES` (every primitive created); and the environment:
`setting` (an `FNAD_*` setting, checked: docs/settings.md), `environ_get` (another declared
variable), `cache_dir` (fnad's cache directory), `SettingError`.
"""

from ._core.abstract import AbstractEvalError as AbstractEvalError
from ._core.abstract import ShapedArray as ShapedArray
from ._core.abstract import abstract_eval as abstract_eval
from ._core.abstract import aval_of as aval_of
from ._core.abstract import data_dependent_rule as data_dependent_rule
from ._core.abstract import dtype_rule as dtype_rule
from ._core.abstract import elementwise_rule as elementwise_rule
from ._core.abstract import reduction_rule as reduction_rule
from ._core.abstract import same_rule as same_rule
from ._core.abstract import standin_rule as standin_rule
from ._core.backend import array_module as array_module
from ._batching.families import all_to_front as all_to_front
from ._batching.families import axis_batch as axis_batch
from ._batching.families import batch_size as batch_size
from ._batching.families import elementwise_batch as elementwise_batch
from ._batching.families import image_batch as image_batch
from ._batching.families import keep_batch as keep_batch
from ._batching.families import lead_batch as lead_batch
from ._batching.families import like_batch as like_batch
from ._batching.families import logical_ndim as logical_ndim
from ._batching.families import loop_batch as loop_batch
from ._batching.families import stack_batch as stack_batch
from ._batching.families import to_front as to_front
from ._batching.families import tri_batch as tri_batch
from ._batching.vmap import batch_fallback as batch_fallback
from ._core.rules import as_primitive as as_primitive
from ._core.rules import defabstract_eval as defabstract_eval
from ._core.rules import defbatch as defbatch
from ._core.rules import defjvp as defjvp
from ._core.rules import defjvp_all as defjvp_all
from ._core.rules import defjvp_linear as defjvp_linear
from ._core.rules import defvjp as defvjp
from ._core.rules import defvjp_all as defvjp_all
from ._core.settings import SettingError as SettingError
from ._core.settings import cache_dir as cache_dir
from ._core.settings import environ_get as environ_get
from ._core.settings import setting as setting
from ._core.shapes import dtype_of as dtype_of
from ._core.shapes import ndim as ndim
from ._core.shapes import norm_axes as norm_axes
from ._core.shapes import shape as shape
from ._core.shapes import unbroadcast as unbroadcast
from ._core.tracer import PRIMITIVES as PRIMITIVES
from ._core.tracer import Primitive as Primitive
from ._core.tracer import Tracer as Tracer
from ._core.tracer import getval as getval
from ._core.tracer import primitive as primitive
