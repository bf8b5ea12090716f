"""More named optimizers with optax's names and defaults, each a short `chain`."""

import fnad

from ._base import (GradientTransformation, GradientTransformationExtraArgs, cast_like, chain,
                    check_nonneg, hyper, identity, named, require_params, stateless)
from ._moments import (ema, scale_by_adadelta, scale_by_adamax, scale_by_adan,
                       scale_by_amsgrad, scale_by_belief, scale_by_novograd, scale_by_radam,
                       scale_by_sm3, scale_by_yogi)
from ._steps import (add_noise, scale_by_optimistic_gradient, scale_by_polyak, scale_by_rprop,
                     scale_by_sign)
from ._transforms import (add_decayed_weights, scale, scale_by_adam, scale_by_learning_rate,
                          scale_by_trust_ratio, trace)
from ._wrappers import masked

__all__ = ["nadam", "nadamw", "radam", "adamax", "adamaxw", "adabelief", "amsgrad", "yogi",
           "novograd", "lars", "sm3", "fromage", "adadelta", "rprop", "sign_sgd", "signum",
           "polyak_sgd", "adan", "optimistic_gradient_descent", "optimistic_adam_v2",
           "optimistic_adam", "noisy_sgd"]


def _named(fname, learning_rate, *transforms):
    check_nonneg(fname, "learning_rate", learning_rate)
    return named(fname, chain(*[t for t in transforms if t is not None]))


def nadam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
    """NAdam (Dozat 2016): Adam with Nesterov momentum.

    Example:
      opt = nadam(1e-3)
    """
    return _named("nadam", learning_rate, scale_by_adam(b1, b2, eps, eps_root, nesterov=True),
                  scale_by_learning_rate(learning_rate))


def nadamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, weight_decay=1e-4,
           mask=None):
    """NAdam with decoupled weight decay.

    Example:
      opt = nadamw(1e-3, weight_decay=1e-2)
    """
    return _named("nadamw", learning_rate, scale_by_adam(b1, b2, eps, eps_root, nesterov=True),
                  add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def radam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, threshold=5.0, *,
          nesterov=False):
    """Rectified Adam (Liu et al. 2020).

    Example:
      opt = radam(1e-3)
    """
    return _named("radam", learning_rate,
                  scale_by_radam(b1, b2, eps, eps_root, threshold, nesterov=nesterov),
                  scale_by_learning_rate(learning_rate))


def adamax(learning_rate, b1=0.9, b2=0.999, eps=1e-8):
    """Adamax, Adam with the infinity norm.

    Example:
      opt = adamax(2e-3)
    """
    return _named("adamax", learning_rate, scale_by_adamax(b1, b2, eps),
                  scale_by_learning_rate(learning_rate))


def adamaxw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4, mask=None):
    """Adamax with decoupled weight decay.

    Example:
      opt = adamaxw(2e-3, weight_decay=1e-2)
    """
    return _named("adamaxw", learning_rate, scale_by_adamax(b1, b2, eps),
                  add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def adabelief(learning_rate, b1=0.9, b2=0.999, eps=1e-16, eps_root=1e-16, *, nesterov=False):
    """AdaBelief (Zhuang et al. 2020).

    Example:
      opt = adabelief(1e-3)
    """
    return _named("adabelief", learning_rate,
                  scale_by_belief(b1, b2, eps, eps_root, nesterov=nesterov),
                  scale_by_learning_rate(learning_rate))


def amsgrad(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
            bias_correction_mu=True, bias_correction_nu=True):
    """AMSGrad (Reddi et al. 2018).

    Example:
      opt = amsgrad(1e-3)
    """
    return _named("amsgrad", learning_rate,
                  scale_by_amsgrad(b1, b2, eps, eps_root, mu_dtype, bias_correction_mu,
                                   bias_correction_nu),
                  scale_by_learning_rate(learning_rate))


def yogi(learning_rate, b1=0.9, b2=0.999, eps=1e-3):
    """Yogi (Zaheer et al. 2018).

    Example:
      opt = yogi(1e-2)
    """
    return _named("yogi", learning_rate, scale_by_yogi(b1, b2, eps),
                  scale_by_learning_rate(learning_rate))


def novograd(learning_rate, b1=0.9, b2=0.25, eps=1e-6, eps_root=0.0, weight_decay=0.0):
    """NovoGrad (Ginsburg et al. 2019); `update` needs the params.

    Example:
      opt = novograd(1e-3)
    """
    return _named("novograd", learning_rate,
                  scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
                  scale_by_learning_rate(learning_rate))


def lars(learning_rate, weight_decay=0.0, weight_decay_mask=True, trust_coefficient=1e-3,
         eps=0.0, trust_ratio_mask=True, momentum=0.9, nesterov=False):
    """LARS (You et al. 2017): weight decay, a per-leaf trust ratio, then momentum.

    Example:
      opt = lars(0.1, weight_decay=1e-4)
    """
    def maybe_masked(tx, mask):
        if mask is True:
            return tx
        return identity() if mask is False else masked(tx, mask)

    return _named("lars", learning_rate,
                  maybe_masked(add_decayed_weights(weight_decay), weight_decay_mask),
                  maybe_masked(scale_by_trust_ratio(trust_coefficient=trust_coefficient,
                                                    eps=eps), trust_ratio_mask),
                  scale_by_learning_rate(learning_rate), trace(momentum, nesterov))


def sm3(learning_rate, momentum=0.9):
    """SM3 (Anil et al. 2019), memory-efficient adaptive steps.

    Example:
      opt = sm3(1e-2)
    """
    return _named("sm3", learning_rate, scale_by_sm3(momentum), scale(-learning_rate))


def fromage(learning_rate, min_norm=1e-6):
    """Fromage (Bernstein et al. 2020): steps relative to each leaf's norm, the params shrunk
    by `1 / sqrt(1 + lr ** 2)`.

    Example:
      opt = fromage(1e-2)
    """
    if callable(learning_rate):
        def mult(c):
            return 1 / (1 + hyper(learning_rate, c) ** 2) ** 0.5

        lr, shrink = (lambda c: mult(c) * hyper(learning_rate, c)), (lambda c: mult(c) - 1)
    else:
        m = 1 / (1 + learning_rate ** 2) ** 0.5
        lr, shrink = learning_rate * m, m - 1
    return _named("fromage", learning_rate, scale_by_trust_ratio(min_norm),
                  scale_by_learning_rate(lr), _shrink_weights(shrink))


def _shrink_weights(factor):
    """`add_decayed_weights` whose factor is negative (fromage's `1 / sqrt(1 + lr ** 2) -
    1`), a number or a schedule."""
    def fn(updates, params, factor):
        require_params("fromage", params)
        return fnad.tree_map(lambda u, p: u + cast_like(factor, p) * p, updates, params)

    return stateless("fromage", fn, factor=factor)


def adadelta(learning_rate=None, rho=0.9, eps=1e-6, weight_decay=0.0, weight_decay_mask=None):
    """AdaDelta (Zeiler 2012); `learning_rate` None means 1 with no schedule.

    Example:
      opt = adadelta(1.0)
    """
    lr = 1.0 if learning_rate is None else learning_rate
    return _named("adadelta", lr, add_decayed_weights(weight_decay, weight_decay_mask),
                  scale_by_adadelta(rho, eps), scale_by_learning_rate(lr))


def rprop(learning_rate, eta_minus=0.5, eta_plus=1.2, min_step_size=1e-6, max_step_size=50.0):
    """Rprop (Riedmiller and Braun 1993), for full-batch problems.

    Example:
      opt = rprop(1e-2)
    """
    return _named("rprop", learning_rate,
                  scale_by_rprop(learning_rate, eta_minus, eta_plus, min_step_size,
                                 max_step_size), scale(-1.0))


def sign_sgd(learning_rate):
    """signSGD (Bernstein et al. 2018): steps of the gradient's sign.

    Example:
      opt = sign_sgd(1e-3)
    """
    return _named("sign_sgd", learning_rate, scale_by_sign(),
                  scale_by_learning_rate(learning_rate))


def signum(learning_rate, beta=0.9, accumulator_dtype=None):
    """Signum (Bernstein et al. 2018): the sign of a momentum (an undebiased EMA).

    Example:
      opt = signum(1e-3)
    """
    return _named("signum", learning_rate, ema(beta, debias=False,
                                               accumulator_dtype=accumulator_dtype),
                  scale_by_sign(), scale_by_learning_rate(learning_rate))


def polyak_sgd(max_learning_rate=1.0, scaling=1.0, f_min=0.0, eps=0.0, variant="sps"):
    """SGD with the Polyak step size (Loizou et al. 2021); `update` takes the loss as
    `value=`.

    Example:
      updates, state = opt.update(grads, state, params, value=loss)
    """
    check_nonneg("polyak_sgd", "scaling", scaling)
    head = scale_by_learning_rate(scaling)
    tail = scale_by_polyak(f_min, max_learning_rate, eps, variant)

    def init(params):
        return (head.init(params), tail.init(params))

    def update(updates, state, params=None, *, value=None, **extra_args):
        updates, s0 = head.update(updates, state[0], params)
        updates, s1 = tail.update(updates, state[1], params, value=value)
        return updates, (s0, s1)

    return GradientTransformationExtraArgs(named("polyak_sgd", GradientTransformation(
        init, update)).init, update)


def adan(learning_rate, b1=0.98, b2=0.92, b3=0.99, eps=1e-8, eps_root=1e-8, weight_decay=0.0,
         mask=None):
    """Adan (Xie et al. 2022).

    Example:
      opt = adan(1e-3, weight_decay=1e-2)
    """
    return _named("adan", learning_rate, scale_by_adan(b1, b2, b3, eps, eps_root),
                  add_decayed_weights(weight_decay, mask), scale_by_learning_rate(learning_rate))


def optimistic_gradient_descent(learning_rate, alpha=1.0, beta=1.0):
    """Optimistic gradient descent (for min-max games).

    Example:
      opt = optimistic_gradient_descent(1e-2)
    """
    return _named("optimistic_gradient_descent", learning_rate,
                  scale_by_optimistic_gradient(alpha, beta),
                  scale_by_learning_rate(learning_rate))


def optimistic_adam_v2(learning_rate, *, alpha=1.0, beta=1.0, b1=0.9, b2=0.999, eps=1e-8,
                       eps_root=0.0, mu_dtype=None, nesterov=True):
    """Optimistic Adam: Adam's direction (Nesterov by default) made optimistic.

    Example:
      opt = optimistic_adam_v2(1e-3)
    """
    if mu_dtype is not None:
        raise ValueError("optimistic_adam_v2: mu_dtype is not supported; leave it None.")
    return _named("optimistic_adam_v2", learning_rate,
                  scale_by_adam(b1, b2, eps, eps_root, nesterov=nesterov),
                  scale_by_optimistic_gradient(alpha, beta),
                  scale_by_learning_rate(learning_rate))


def optimistic_adam(learning_rate, optimism=None, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0,
                    mu_dtype=None, *, nesterov=True):
    """optax's older optimistic Adam: `optimistic_adam_v2` with `alpha=learning_rate`,
    `beta=optimism` (default the learning rate) and a unit learning rate; numbers only.

    Example:
      opt = optimistic_adam(1e-3)
    """
    if callable(learning_rate) or mu_dtype is not None:
        raise ValueError("optimistic_adam: takes a number as learning_rate and no mu_dtype; "
                         "use optimistic_adam_v2 for schedules.")
    optimism = learning_rate if optimism is None else optimism
    return _named("optimistic_adam", learning_rate,
                  scale_by_adam(b1, b2, eps, eps_root, nesterov=nesterov),
                  scale_by_optimistic_gradient(learning_rate, optimism),
                  scale_by_learning_rate(1.0))


def noisy_sgd(learning_rate, eta=0.01, gamma=0.55, key=None, *, seed=None):
    """SGD with annealed gradient noise (`add_noise`), drawn with fnad.random.

    Example:
      opt = noisy_sgd(1e-2, key=0)
    """
    return _named("noisy_sgd", learning_rate, add_noise(eta, gamma, key, seed=seed),
                  scale_by_learning_rate(learning_rate))
