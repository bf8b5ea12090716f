"""Deliberate differences from torch (with the reference that decides) and the fnad defects
still open, for tests/opinfo.

`XFAIL[(name, check)]` (check "*" for every check; a third element "complex128"/"float64" for
one dtype) names a defect: the test is xfail(strict=False) so it passes once the fix lands.
`DIFFERENT[name]` is a deliberate difference: torch does one thing, NumPy/SciPy another, and
fnad follows NumPy; the value check then compares with NumPy/SciPy's function instead."""

XFAIL = {}
DIFFERENT = {}
