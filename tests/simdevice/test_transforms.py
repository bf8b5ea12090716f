"""The transforms on the simulated device: grad, jvp, hessian, vmap, lax control flow,
custom_vjp, checkpoint and jit (the device branch of the compiler: unfused, no host round
trip) give NumPy's values, keep every result on the device and make no host-device
transfer; fnad.random draws the same bits as on NumPy; checkpoints save from the device and
load onto it."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
import fnad.random as jr
from fnad import lax
from fnad._core.backend import is_device_array
from tests.simdevice import simcupy, transfers

pytestmark = pytest.mark.sim_device
R = np.random.default_rng(0)
PARAMS = {"w1": R.standard_normal((5, 8)), "b1": np.zeros(8), "w2": R.standard_normal((8, 2))}
X, Y = R.standard_normal((16, 5)), R.standard_normal((16, 2))


def loss(p, x, y):
    h = fnp.tanh(x @ p["w1"] + p["b1"])
    return fnp.mean((h @ p["w2"] - y) ** 2)


def _dev(tree):
    return fnad.device_put(tree, "gpu")


def _same(got, want, rtol=1e-12):
    """Every leaf of `got` a device array equal to `want`'s leaf."""
    g, w = fnad.tree_leaves(got), fnad.tree_leaves(want)
    assert len(g) == len(w)
    for a, b in zip(g, w):
        assert is_device_array(a), f"a {type(a).__name__} left the device"
        np.testing.assert_allclose(fnad.to_numpy(a), b, rtol=rtol, atol=rtol)


def _on_device(fun, *args):
    """`fun(*args)` on device copies of `args`, checked to make no transfer."""
    dargs = _dev(args)
    with transfers() as log:
        out = fun(*dargs)
    assert not log.events, log
    return out


TRANSFORMS = {
    "value_and_grad": lambda p, x, y: fnad.value_and_grad(loss)(p, x, y),
    "grad argnums": lambda p, x, y: fnad.grad(loss, argnums=(0, 1))(p, x, y),
    "jvp": lambda p, x, y: fnad.jvp(lambda q: loss(q, x, y), (p,), (p,)),
    "hessian": lambda p, x, y: fnad.hessian(lambda b: loss(dict(p, b1=b), x, y))(p["b1"]),
    "jacfwd": lambda p, x, y: fnad.jacfwd(lambda b: fnp.tanh(x @ p["w1"] + b))(p["b1"]),
    "jacrev": lambda p, x, y: fnad.jacrev(lambda b: fnp.tanh(x @ p["w1"] + b))(p["b1"]),
    "vmap per-example grads": lambda p, x, y: fnad.vmap(
        fnad.grad(loss), in_axes=(None, 0, 0))(p, x[:, None], y[:, None]),
    "vmap of jvp": lambda p, x, y: fnad.vmap(lambda xi, yi: fnad.jvp(
        lambda q: loss(q, xi[None], yi[None]), (p,), (p,))[1])(x, y),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_on_device(name):
    f = TRANSFORMS[name]
    _same(_on_device(f, PARAMS, X, Y), f(PARAMS, X, Y), rtol=1e-10)


def _scan_loss(w, xs):
    def body(h, x):
        h = fnp.tanh(h @ w + x)
        return h, fnp.sum(h ** 2)
    h, ys = lax.scan(body, fnp.zeros_like(xs[0]), xs)
    return fnp.sum(ys) + fnp.sum(h)


def _cond(w, x):
    return lax.cond(fnp.sum(x) > 0, lambda v: fnp.sum(fnp.sin(v @ w)),
                    lambda v: fnp.sum(v @ w) ** 2, x)


def _loops(w, x):
    v = lax.fori_loop(0, 3, lambda i, v: fnp.tanh(v @ w), x)
    return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 0.9), (0, v))[1]


W, XS = 0.3 * R.standard_normal((4, 4)), R.standard_normal((6, 4))
LAX = {
    "scan": lambda w, xs: _scan_loss(w, xs),
    "grad scan": lambda w, xs: fnad.grad(_scan_loss, argnums=(0, 1))(w, xs),
    "jit grad scan": lambda w, xs: fnad.jit(fnad.grad(_scan_loss))(w, xs),
    "grad cond": lambda w, xs: fnad.grad(_cond)(w, xs[0]),
    "jit cond": lambda w, xs: fnad.jit(_cond)(w, xs[1]),
    "loops": lambda w, xs: _loops(w, xs[0]),
    "jit loops": lambda w, xs: fnad.jit(_loops)(w, xs[0]),
    "vmap scan": lambda w, xs: fnad.vmap(_scan_loss, in_axes=(None, 0))(
        w, fnp.stack([xs, 0.5 * xs])),
}


# A cond chooses the branch to run, and a while loop whether to go on, on the host: each
# reads its predicate back (one 0-d bool), under jit too; scan and fori_loop read nothing.
READS = {"grad cond": 2, "jit cond": 1, "loops": 5, "jit loops": 5}


@pytest.mark.parametrize("name", LAX)
def test_lax_control_flow_on_device(name):
    f = LAX[name]
    dargs = _dev((W, XS))
    f(*dargs)  # jit traces once
    with transfers() as log:
        out = f(*dargs)
    assert log.to_device == 0 and log.to_host == READS.get(name, 0), log
    _same(out, f(W, XS))


@fnad.custom_vjp
def _clip_grad(x):
    return fnp.sin(x)


_clip_grad.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)),
                  lambda c, g: (fnp.clip(g * c, -0.1, 0.1),))


def test_custom_vjp_and_checkpoint_on_device():
    def f(p, x, y):
        return fnp.sum(_clip_grad(fnad.checkpoint(loss)(p, x, y) * x))
    for g in (fnad.grad(f), fnad.jit(fnad.grad(f)), fnad.vmap(fnad.grad(f), (None, 0, None))):
        args = (PARAMS, X, Y) if g.__name__ != "vmap" else (PARAMS, X[None], Y)
        _same(_on_device(g, *args), g(*args))


def _fused(f, *args):
    return f.graph(*args).primitive_counts().get("fused_elementwise", 0)


def test_jit_on_device_is_unfused_and_makes_no_round_trip():
    chain = fnad.jit(lambda v: fnp.sum(fnp.tanh(v * 2.0 + 1.0) * v - v / 3.0))
    big = R.standard_normal((64, 64))
    assert _fused(chain, big) >= 1 and _fused(chain, _dev(big)) == 0  # no numba on a device
    step = fnad.jit(fnad.value_and_grad(loss))
    dargs = _dev((PARAMS, X, Y))
    assert _fused(step, *dargs) == 0
    step(*dargs)
    with transfers() as log:
        for _ in range(3):
            out = step(*dargs)
    assert not log.events, log
    _same(out, step(PARAMS, X, Y), rtol=1e-12)
    assert step.cache_size() == 2  # a signature per device


def test_device_put_is_differentiable_both_ways():
    g = fnad.grad(lambda v: fnp.sum(fnad.device_put(v, "gpu") ** 2))(X)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, 2 * X)
    g = fnad.grad(lambda v: fnp.sum(fnad.device_put(v, "cpu") ** 2))(_dev(X))
    assert is_device_array(g)


def _draws(key, xp):
    return {
        "bits": jr.bits(key, (7,)), "bits64": jr.bits(key, (3,), np.uint64),
        "uniform": jr.uniform(key, (5,)), "uniform64": jr.uniform(key, (5,), np.float64),
        "normal": jr.normal(key, (2, 3)), "normal64": jr.normal(key, (3,), np.float64),
        "normal16": jr.normal(key, (3,), np.float16),
        "tn": jr.truncated_normal(key, -1.0, 2.0, (4,)),
        "bern": jr.bernoulli(key, 0.3, (9,)), "cat": jr.categorical(key, xp.zeros((3, 4))),
        "randint": jr.randint(key, (6,), -5, 5), "perm": jr.permutation(key, 11),
        "gumbel": jr.gumbel(key, (3,)), "split": jr.split(key, 3), "fold": jr.fold_in(key, 7),
        "vmap": fnad.vmap(lambda k: jr.normal(k, (2,)))(jr.split(key, 4)),
        "jit": fnad.jit(lambda k: jr.uniform(k, (3,)))(key),
    }


@pytest.mark.parametrize("seed", [0, 12345])
def test_random_same_bits_on_device(seed):
    key = jr.PRNGKey(seed)
    host = _draws(key, np)
    dkey = _dev(key)
    _draws(dkey, simcupy)  # jit traces once
    with transfers() as log:
        dev = _draws(dkey, simcupy)
    assert not log.events, log
    for name in host:
        assert is_device_array(dev[name]), f"{name} left the device"
        assert dev[name].dtype == host[name].dtype, name
        np.testing.assert_array_equal(fnad.to_numpy(dev[name]), host[name], err_msg=name)


def test_checkpoint_save_from_and_load_to_device(tmp_path):
    tree = {"p": PARAMS, "step": 3, "key": jr.PRNGKey(1), "f32": X.astype(np.float32)}
    dtree = _dev(tree)
    path = tmp_path / "ck.npz"
    with transfers() as log:
        fnad.save(path, dtree)  # written from host copies, one per array
    assert log.to_host == 5 and log.to_device == 0, log
    host = fnad.load(path)
    assert type(host["p"]["w1"]) is np.ndarray
    for loaded in (fnad.load(path, device="gpu"), fnad.load(path, like=dtree)):
        assert loaded["step"] == 3
        for a, b in zip(fnad.tree_leaves(loaded), fnad.tree_leaves(tree)):
            if hasattr(b, "dtype"):
                assert is_device_array(a) and a.dtype == b.dtype
                np.testing.assert_array_equal(fnad.to_numpy(a), b)


def test_at_set_repeated_index_gradient_stays_on_the_device():
    # only the winning writer of a repeated position gets its cotangent (issue 31); the
    # winners are found on the device (the host index list moves there, as in the forward)
    args = _dev((np.ones((2, 5)), np.ones((2, 3)), np.arange(10.0).reshape(2, 5)))

    def f(x, v, w):
        return fnp.sum(fnp.at(x)[:, [0, 3, 3]].set(v) * w)
    for t in (fnad.grad(f, argnums=1), fnad.jit(fnad.grad(f, argnums=1))):
        _same(t(*args), np.array([[0.0, 0.0, 3.0], [5, 0, 8]]))
