"""autograd.extend on fnad: define primitives with autograd's rule signatures; each
registration fills a slot of an fnad primitive (fnad.extend holds fnad's own signatures).

Example:
  from fnad.autograd.extend import primitive, defvjp
  @primitive
  def logsumexp(x): ...
  defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
"""

from .core import SparseObject as SparseObject
from .core import VSpace as VSpace
from .core import def_linear as def_linear
from .core import defjvp as defjvp
from .core import defjvp_argnum as defjvp_argnum
from .core import defjvp_argnums as defjvp_argnums
from .core import defvjp as defvjp
from .core import defvjp_argnum as defvjp_argnum
from .core import defvjp_argnums as defvjp_argnums
from .core import vspace as vspace
from .tracer import Box as Box
from .tracer import notrace_primitive as notrace_primitive
from .tracer import primitive as primitive
from .tracer import register_notrace as register_notrace

__all__ = ["primitive", "notrace_primitive", "register_notrace", "defvjp", "defvjp_argnum",
           "defvjp_argnums", "defjvp", "defjvp_argnum", "defjvp_argnums", "def_linear", "Box",
           "VSpace", "vspace", "SparseObject"]
