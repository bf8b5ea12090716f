"""fnad.scipy.integrate.odeint: values against scipy.integrate.solve_ivp, gradients (adjoint
method) against finite differences, pytrees, higher order and errors. The op table
(tests/numpy/cases_scipy.py) has its check_grads and torch (expm) rows."""

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp
from fnad.scipy.integrate import odeint
from fnad.test_util import check_grads

scipy_integrate = pytest.importorskip("scipy.integrate")

T = np.array([0.0, 0.3, 1.0, 2.2])


def pendulum(y, t, a, b):
    return fnp.stack([a * y[1], -b * fnp.sin(y[0]) - 0.1 * y[1] + 0.2 * fnp.cos(t)])


def _fd_grad(f, x, eps=1e-5):
    x = np.asarray(x, np.float64)
    g = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        d = np.zeros(x.shape)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def test_values_match_solve_ivp():
    y0, a, b = np.array([1.0, -0.3]), 1.2, 0.8
    ys = odeint(pendulum, y0, T, a, b, rtol=1e-10, atol=1e-10)
    ref = scipy_integrate.solve_ivp(lambda t, y: pendulum(y, t, a, b), (T[0], T[-1]), y0,
                                    t_eval=T, method="DOP853", rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ys, ref.y.T, atol=1e-8)
    assert ys.shape == (4, 2)
    # default tolerances (1.4e-8, as JAX and scipy's odeint)
    np.testing.assert_allclose(odeint(pendulum, y0, T, a, b), ref.y.T, atol=1e-6)


def test_gradients_match_finite_differences():
    y0, a, b = np.array([1.0, -0.3]), np.array(1.2), np.array(0.8)
    tol = dict(rtol=1e-11, atol=1e-11)

    def loss(y0, t, a, b):
        ys = odeint(pendulum, y0, t, a, b, **tol)
        return fnp.sum(ys ** 2 * fnp.arange(1.0, 3.0))

    grads = fnad.grad(loss, argnums=(0, 1, 2, 3))(y0, T, a, b)
    fds = [_fd_grad(lambda y: loss(y, T, a, b), y0), _fd_grad(lambda t: loss(y0, t, a, b), T),
           _fd_grad(lambda v: loss(y0, T, v, b), a), _fd_grad(lambda v: loss(y0, T, a, v), b)]
    for g, fd in zip(grads, fds):
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_pytree_state_and_args():
    def f(y, t, p):
        return {"x": y["v"], "v": -p["k"] * y["x"] - p["c"] * y["v"]}

    y0 = {"x": np.array([1.0, 0.5]), "v": np.array([0.0, 0.1])}
    p = {"k": np.array(2.0), "c": np.array(0.3)}
    ys = odeint(f, y0, T, p)
    assert ys["x"].shape == ys["v"].shape == (4, 2)
    check_grads(lambda y0, p: odeint(f, y0, T, p, rtol=1e-10, atol=1e-10), (y0, p), order=1,
                modes=("rev",))


def test_second_order_reverse():
    def decay(y, t, k):
        return -k * y

    # y(t) = y0 exp(-k t): d^2/dk^2 sum y = sum t^2 y0 exp(-k t)
    k, y0 = np.array(0.7), np.array([1.0, 2.0])
    h = fnad.grad(fnad.grad(lambda k: fnp.sum(odeint(decay, y0, T, k, rtol=1e-11,
                                                     atol=1e-11))))(k)
    np.testing.assert_allclose(h, np.sum(T[:, None] ** 2 * y0 * np.exp(-k * T[:, None])),
                               rtol=1e-7)


def test_errors():
    t = np.linspace(0.0, 1.0, 3)
    with pytest.raises(ValueError, match="t must be increasing"):
        odeint(lambda y, t: -y, 1.0, t[::-1])
    with pytest.raises(ValueError, match="1-D array of times"):
        odeint(lambda y, t: -y, 1.0, np.ones((2, 2)))
    with pytest.raises(TypeError, match="must be callable"):
        odeint(3, 1.0, t)
    with pytest.raises(RuntimeError, match="mxstep=5"):
        odeint(lambda y, t: fnp.cos(40 * t) * y, 1.0, np.array([0.0, 10.0]), mxstep=5)
    k = np.array(2.0)
    with pytest.raises(TypeError, match="through odeint's \\*args"):
        fnad.grad(lambda k: fnp.sum(odeint(lambda y, t: -k * y, 1.0, t)))(k)
    with pytest.raises(TypeError, match="forward-mode"):
        fnad.jvp(lambda y0: odeint(lambda y, t: -y, y0, t), (1.0,), (1.0,))


def test_extra_arguments_reach_func_after_y_and_t():
    """odeint(func, y0, t, *args) calls func(y, t, *args), as JAX's odeint and as SciPy's
    odeint(func, y0, t, args=args) do (issue 21)."""
    calls = []

    def func(y, t, a, b, c):
        calls.append((fnp.shape(y), fnp.shape(t), fnp.shape(a), fnp.shape(b), fnp.shape(c)))
        return a * y + b * fnp.sin(t) - c * y ** 3

    y0, a, b, c = np.array([0.5, -0.2]), np.array(-0.4), np.array([1.0, 2.0]), np.array(0.1)
    ys = odeint(func, y0, T, a, b, c, rtol=1e-10, atol=1e-10)
    assert calls and all(shapes == ((2,), (), (), (2,), ()) for shapes in calls)
    ref = scipy_integrate.odeint(lambda y, t, a, b, c: a * y + b * np.sin(t) - c * y ** 3,
                                 y0, T, args=(a, b, c), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(ys, ref, atol=1e-8)
    g = fnad.grad(lambda a, b, c: fnp.sum(odeint(func, y0, T, a, b, c, rtol=1e-10,
                                                 atol=1e-10)), argnums=(0, 1, 2))(a, b, c)
    fd = [_fd_grad(lambda v: np.sum(odeint(func, y0, T, v, b, c, rtol=1e-11, atol=1e-11)), a),
          _fd_grad(lambda v: np.sum(odeint(func, y0, T, a, v, c, rtol=1e-11, atol=1e-11)), b),
          _fd_grad(lambda v: np.sum(odeint(func, y0, T, a, b, v, rtol=1e-11, atol=1e-11)), c)]
    for gi, fi in zip(g, fd):
        np.testing.assert_allclose(gi, fi, rtol=1e-6, atol=1e-8)
