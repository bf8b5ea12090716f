"""The memory plan's claims about implementations hold for every primitive call the op
battery makes: a primitive counted as allocating (`fnad/_graph/memory.py`: the ufuncs and
`ALLOCATING`) returns arrays that share no memory with its arguments, since jit writes
into the buffers of such results (`out=`) and hands them out as the caller's own."""

import contextlib

import numpy as np

import fnad
from fnad._core.tracer import PRIMITIVES
from fnad._graph.memory import ALLOCATING
from tests.numpy import cases_linalg, cases_scipy
from tests.numpy.battery import leaves
from tests.numpy.cases import CASES

ALL_CASES = CASES + cases_linalg.CASES + cases_scipy.CASES


def _arrays(x):
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, dict):
        return [a for v in x.values() for a in _arrays(v)]
    return [x] if isinstance(x, np.ndarray) else []


@contextlib.contextmanager
def _watching(bad, seen):
    saved = [(p, p.impl) for p in PRIMITIVES if p.name in ALLOCATING]

    def watch(prim, impl):
        def run(*args, **kwargs):
            out = impl(*args, **kwargs)
            seen.add(prim.name)
            ins = _arrays(list(args)) + _arrays(kwargs)
            for o in _arrays(leaves(out) if isinstance(out, (list, tuple)) else [out]):
                if any(np.shares_memory(o, a) for a in ins):
                    bad.setdefault(prim.name, [a.shape for a in ins])
            return out
        return run
    for p, impl in saved:
        p.impl = watch(p, impl)
    try:
        yield
    finally:
        for p, impl in saved:
            p.impl = impl


def _run(case):
    args = tuple(np.asarray(a, np.float64) for a in case.args)
    out, f_vjp = fnad.vjp(case.fun, *args)
    f_vjp(type(out)(np.ones(np.shape(o)) for o in out) if isinstance(out, (tuple, list))
          else np.ones(np.shape(out)))


def test_allocating_primitives_return_fresh_arrays():
    bad, seen = {}, set()
    with _watching(bad, seen), np.errstate(all="ignore"):
        for case in ALL_CASES:
            _run(case)
    assert not bad, bad
    assert len(seen) >= 15, sorted(seen)


def test_ufunc_results_are_fresh():
    # a ufunc called without out= always allocates: the rule the memory plan starts from
    x = np.arange(6.0).reshape(2, 3)
    for f in (np.add, np.multiply, np.negative, np.positive, np.maximum, np.matmul):
        out = f(x, x.T @ x) if f is np.matmul else (f(x, x) if f.nin == 2 else f(x))
        assert not np.shares_memory(out, x), f
