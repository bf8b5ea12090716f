"""fnad/_jit/arena.py: a compiled program keeps its large intermediates in buffers of its
own, reused across calls and released with the program; no caller ever sees one (outputs
are fresh, a primitive that may keep its argument gets a fresh array), concurrent calls
each get their own, and results keep eager's bits and layout."""

import gc
import threading
import weakref

import numpy as np

import fnad
import fnad.numpy as fnp
from fnad.extend import defabstract_eval, primitive, same_rule


def _layer(a, b):
    return fnp.sum(fnp.tanh(a @ b) * 2.0 + 1.0)


def _ab(seed=0, n=256):
    r = np.random.default_rng(seed)
    return r.standard_normal((n, 64)), r.standard_normal((64, 512))


def test_large_intermediates_live_in_the_programs_arena_reused_across_calls():
    j = fnad.jit(_layer)
    a, b = _ab()
    assert j(a, b) == _layer(a, b)
    arenas = j._entry(a, b).run.arenas
    # matmul's result (tanh writes in place into it) and the fused kernel's output (a
    # fused kernel never writes over its inputs: fnad/_graph/memory.py)
    assert arenas.sizes == [256 * 512 * 8] * 2
    first = arenas.free[0]
    a2, b2 = _ab(1)
    assert j(a2, b2) == _layer(a2, b2)
    assert arenas.free == [first]  # the same buffers, not new ones


def test_small_programs_keep_no_arena():
    j = fnad.jit(_layer)
    a, b = _ab(n=8)
    j(a, b)
    assert j._entry(a, b).run.arenas is None


def test_the_arena_goes_with_the_program():
    j = fnad.jit(_layer)
    a, b = _ab()
    j(a, b)
    ref = weakref.ref(j._entry(a, b).run.arenas)
    j.clear_cache()
    gc.collect()
    assert ref() is None


def test_outputs_and_their_views_never_share_the_arena():
    def f(a, b):
        h = fnp.tanh(a @ b) * 2.0
        return h[0], fnp.exp(a @ b), fnp.sum(h)

    j = fnad.jit(f)
    a, b = _ab()
    first = [o.copy() for o in j(a, b)]
    out = j(a, b)
    j(*_ab(1))
    for x, y in zip(first, out):
        np.testing.assert_array_equal(x, y)


def test_a_primitive_that_may_keep_its_argument_gets_a_fresh_one():
    kept = []

    def _keep(x):  # user code outside fnad: it may hold on to what it is given
        kept.append(x)
        return x * 1.0

    keep = primitive(_keep, "keep_for_test")
    defabstract_eval(keep, same_rule)
    j = fnad.jit(lambda a, b: fnp.sum(keep(a @ b)))
    a, b = _ab()
    j(a, b)
    j(*_ab(1))
    np.testing.assert_array_equal(kept[0], a @ b)


def test_concurrent_calls_each_use_their_own_arena():
    j = fnad.jit(_layer)
    inputs = [_ab(s) for s in range(4)]
    want = [_layer(*ab) for ab in inputs]
    j(*inputs[0])
    got, errors = {}, []

    def work(k):
        try:
            for _ in range(20):
                got.setdefault(k, set()).add(float(j(*inputs[k])))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == {k: {float(w)} for k, w in enumerate(want)}


def test_layouts_stay_eagers_where_the_inputs_are_not_c_contiguous():
    # tanh of a transposed input is F-ordered eagerly, and the column sums read it so:
    # a C-ordered arena slot would change the order of the additions
    def f(x, w):
        h = fnp.tanh(x.T) * 3.0
        return fnp.sum(h, axis=0), fnp.sum(fnp.tanh(w @ x) * 2.0, axis=1)

    r = np.random.default_rng(0)
    x, w = r.standard_normal((300, 200)), r.standard_normal((300, 300))
    for got, want in zip(fnad.jit(f)(x, w), f(x, w)):
        np.testing.assert_array_equal(got, want)
