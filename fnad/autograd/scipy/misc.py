"""autograd.scipy.misc on fnad: `logsumexp` (SciPy moved it to scipy.special)."""

from fnad.scipy.special import logsumexp as logsumexp
