"""The op-case record and helpers shared by the case tables (see tests/numpy/cases.py)."""

import dataclasses
import zlib
from typing import Callable, Optional

import numpy as np

try:  # torch is a test-only oracle; the tables load without it
    import torch
except ImportError:  # pragma: no cover
    torch = None

SHAPES = [(), (3,), (2, 3), (1, 3), (2, 1, 3)]
# Broadcastable pairs for binary ops, interior size-1 axes included.
PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1)),
         ((2, 1, 3), (2, 4, 3)), ((), (2, 3))]


@dataclasses.dataclass
class OpCase:
    """One gradient-check case: see the format description in tests/numpy/cases.py."""

    name: str
    variant: str
    fun: Callable
    args: tuple
    torch_fun: Optional[Callable] = None
    order: int = 2
    modes: tuple = ("fwd", "rev")
    atol: Optional[float] = None
    rtol: Optional[float] = None
    eps: Optional[float] = None

    @property
    def id(self):
        return f"{self.name}[{self.variant}]"

    @property
    def shapes(self):
        return tuple(np.shape(a) for a in self.args)


def _uniform(lo, hi):
    return lambda r, s: r.uniform(lo, hi, s)


DOMAINS = {
    "real": lambda r, s: r.standard_normal(s),
    "pos": _uniform(0.5, 2.0),
    "unit": _uniform(-0.9, 0.9),
    "gt1": _uniform(1.2, 3.0),
    "nonzero": lambda r, s: r.choice([-1.0, 1.0], s) * r.uniform(0.3, 2.0, s),
    "int": lambda r, s: r.integers(0, 3, s).astype(np.float64) + 0.5,  # half-integers
}


def rng_for(*key):
    """A generator seeded by the case's name, so every run sees the same points."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def sample(domain, shape, rng):
    """A float64 array of `shape` drawn from a domain name or a callable (rng, shape)."""
    gen = DOMAINS[domain] if isinstance(domain, str) else domain
    return np.asarray(gen(rng, shape), dtype=np.float64)


def make_args(name, variant, domains, shapes):
    rng = rng_for(name, variant)
    return tuple(sample(d, s, rng) for d, s in zip(domains, shapes))


def shape_id(shapes):
    return "x".join("(" + ",".join(map(str, s)) + ")" for s in shapes)


def tensors(*args):
    """float64 torch leaves requiring grad (for parity)."""
    return [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]


def tdims(axis, nd):
    """An axis argument as torch's `dim` (a tuple of every axis when None)."""
    if axis is None:
        return tuple(range(nd))
    return tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
