"""fnad.numpy.linalg: differentiable linear algebra (filled in by the linalg work)."""
