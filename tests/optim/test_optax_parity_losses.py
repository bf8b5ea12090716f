"""fnad_optim.losses against optax.losses in float64: values and gradients (jax x64)."""

import numpy as np
import pytest

import fnad
import fnad_optim.losses as fl

optax = pytest.importorskip("optax")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

R = np.random.default_rng(0)
X = R.normal(size=(4, 5))
Y = R.normal(size=(4, 5))
Z = R.normal(size=(4, 5))
P = np.exp(Y) / np.exp(Y).sum(-1, keepdims=True)
P0 = P.copy()
P0[0, 1] = 0.0
INT = R.integers(0, 5, size=4)
B01 = (R.random((4, 5)) > 0.5).astype(float)
PM1 = np.where(B01 > 0, 1.0, -1.0)
W = R.random((4, 5)) > 0.2
LOGP = np.log(P)
SAFE_X = np.where(W, X, -np.inf)
SAFE_P = np.where(W, P, 0.0)

# name: (args, kwargs, index of the differentiated argument or None)
CASES = {
    "l2_loss": ((X, Y), {}, 0),
    "squared_error": ((X, Y), {}, 0),
    "huber_loss": ((2 * X, Y), {"delta": 0.7}, 0),
    "log_cosh": ((X, Y), {}, 0),
    "softmax_cross_entropy": ((X, P), {}, 0),
    "softmax_cross_entropy_with_integer_labels": ((X, INT), {}, 0),
    "safe_softmax_cross_entropy": ((SAFE_X, SAFE_P), {}, None),
    "sigmoid_binary_cross_entropy": ((X, B01), {}, 0),
    "sigmoid_focal_loss": ((X, B01), {"alpha": 0.25, "gamma": 1.5}, 0),
    "hinge_loss": ((X, PM1), {}, 0),
    "perceptron_loss": ((X, PM1), {}, 0),
    "multiclass_hinge_loss": ((X, INT), {}, 0),
    "multiclass_perceptron_loss": ((X, INT), {}, 0),
    "cosine_similarity": ((X, Y), {"epsilon": 1e-8}, 0),
    "cosine_distance": ((X, Y), {}, 0),
    "kl_divergence": ((LOGP[::-1], P0), {}, 0),
    "kl_divergence_with_log_targets": ((LOGP[::-1], LOGP), {}, 0),
    "generalized_kl_divergence": ((LOGP[::-1], P0), {}, 0),
    "poly_loss_cross_entropy": ((X, P), {"epsilon": 1.5}, 0),
    "smooth_labels": ((P, 0.1), {}, 0),
    "triplet_margin_loss": ((X, Y, Z), {"margin": 2.0}, 0),
    "ntxent": ((X, np.array([0, 0, 1, 1])), {"temperature": 0.5}, 0),
}
WHERE_CASES = ["softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
               "cosine_similarity", "kl_divergence", "poly_loss_cross_entropy"]


def _compare(name, args, kwargs, argnum):
    ours = getattr(fl, name)
    theirs = getattr(optax.losses, name)
    np.testing.assert_allclose(np.asarray(ours(*args, **kwargs)),
                               np.asarray(theirs(*args, **kwargs)), rtol=1e-12, atol=1e-12)
    if argnum is None:
        return

    def scalar(f, lib):
        def g(x):
            a = list(args)
            a[argnum] = x
            return lib.sum(f(*a, **kwargs))
        return g

    g_ours = fnad.grad(scalar(ours, fnad.numpy))(args[argnum])
    g_theirs = jax.grad(scalar(theirs, jax.numpy))(args[argnum])
    np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-10,
                               atol=1e-12)


# gradients too in the default run (each costs JAX's op-by-op compiles); the others with -m slow
GRAD_FAST = {"softmax_cross_entropy", "sigmoid_binary_cross_entropy", "kl_divergence",
             "multiclass_hinge_loss", "cosine_similarity"}
SLOW = {"ntxent"}  # optax's eager ntxent alone takes seconds


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in sorted(CASES)])
def test_loss_matches_optax(name):
    args, kwargs, argnum = CASES[name]
    _compare(name, args, kwargs, argnum if name in GRAD_FAST else None)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(CASES) - GRAD_FAST))
def test_loss_gradient_matches_optax(name):
    _compare(name, *CASES[name])


@pytest.mark.parametrize("name", WHERE_CASES)
def test_loss_with_where_matches_optax(name):
    args, kwargs, _ = CASES[name]
    _compare(name, args, dict(kwargs, where=W), None)


def test_ctc_loss_matches_optax():
    _ctc(grads=False)


@pytest.mark.slow
def test_ctc_loss_gradient_matches_optax():
    _ctc(grads=True)


def _ctc(grads):
    logits = R.normal(size=(2, 6, 4))
    logit_pad = np.zeros((2, 6))
    logit_pad[1, 4:] = 1.0
    labels = np.array([[1, 2, 2], [3, 1, 0]])
    label_pad = np.array([[0.0, 0, 0], [0, 0, 1]])
    ours = fl.ctc_loss_with_forward_probs(logits, logit_pad, labels, label_pad)
    theirs = optax.losses.ctc_loss_with_forward_probs(logits, logit_pad, labels, label_pad)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-10)
    if not grads:
        return
    g_ours = fnad.grad(lambda x: fnad.numpy.sum(fl.ctc_loss(x, logit_pad, labels,
                                                             label_pad)))(logits)
    g_theirs = jax.grad(lambda x: optax.losses.ctc_loss(x, logit_pad, labels,
                                                        label_pad).sum())(logits)
    np.testing.assert_allclose(np.asarray(g_ours), np.asarray(g_theirs), rtol=1e-9,
                               atol=1e-12)


def test_losses_under_jit():
    f = fnad.jit(lambda x, p: fl.softmax_cross_entropy(x, p).mean())
    np.testing.assert_allclose(float(f(X, P)), float(optax.losses.softmax_cross_entropy(
        X, P).mean()), rtol=1e-12)


def test_loss_errors_name_the_function():
    with pytest.raises(TypeError, match="softmax_cross_entropy_with_integer_labels"):
        fl.softmax_cross_entropy_with_integer_labels(X, P)
    with pytest.raises(TypeError, match="kl_divergence"):
        fl.kl_divergence(INT, P)


SEG_LOGITS = R.normal(size=(2, 3, 4, 3))
SEG_TARGETS = np.eye(3)[R.integers(0, 3, size=(2, 3, 4))]
SEG_CASES = {
    "dice_loss": ((SEG_LOGITS, SEG_TARGETS), {}),
    "dice_loss_tversky": ((SEG_LOGITS, SEG_TARGETS),
                          {"alpha": 0.3, "beta": 0.7, "reduction": "sum",
                           "ignore_background": True, "class_weights": np.array([1., 2, 3])}),
    "binary_dice_loss": ((SEG_LOGITS[..., 0], SEG_TARGETS[..., 0]), {}),
    "multiclass_generalized_dice_loss": ((SEG_LOGITS, SEG_TARGETS), {}),
    "sparsemax_loss": ((3 * X, B01), {}),
    "multiclass_sparsemax_loss": ((2 * X, INT), {}),
    "ranking_softmax_loss": ((X, 3 * B01), {}),
    "ranking_softmax_loss_masked": ((X, 3 * B01), {"where": W, "weights": P}),
}


@pytest.mark.parametrize("case", [  # multiclass sparsemax compiles a sort in optax (seconds)
    pytest.param(c, marks=pytest.mark.slow) if c == "multiclass_sparsemax_loss" else c
    for c in sorted(SEG_CASES)])
def test_segmentation_and_sparsemax_losses_match_optax(case):
    name = case.replace("_tversky", "").replace("_masked", "")
    args, kwargs = SEG_CASES[case]
    np.testing.assert_allclose(np.asarray(getattr(fl, name)(*args, **kwargs)),
                               np.asarray(getattr(optax.losses, name)(*args, **kwargs)),
                               rtol=1e-12, atol=1e-14)
