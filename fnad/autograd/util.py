"""autograd.util on fnad: `subvals`, `subval`, `func`, and the deprecated
`quick_grad_check`."""

from ._deprecated import quick_grad_check as quick_grad_check
from ._util import func as func
from ._util import subval as subval
from ._util import subvals as subvals

__all__ = ["subvals", "subval", "func", "quick_grad_check"]
