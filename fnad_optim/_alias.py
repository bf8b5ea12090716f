"""The named optimizers, each a short `chain` of transforms."""

from ._base import chain, check_nonneg, check_unit, named
from ._transforms import (add_decayed_weights, scale_by_adagrad, scale_by_adam,
                          scale_by_learning_rate, scale_by_lion, scale_by_rms, scale_by_stddev,
                          scale_by_trust_ratio, trace)

__all__ = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "lion", "lamb"]


def _given(v):
    """Whether an optional hyperparameter is in use: not None and not the number 0. An array
    (as `inject_hyperparams` passes, concrete in `init` and traced under jit) always counts,
    so the chain's structure does not depend on its value."""
    return v is not None and (not isinstance(v, (int, float)) or v != 0)


def _chain(fname, *transforms):
    """The chain of the given transforms (None: left out) under the optimizer's name."""
    return named(fname, chain(*[t for t in transforms if t is not None]))


def sgd(learning_rate, momentum=None, nesterov=False, weight_decay=0.0, mask=None):
    """Stochastic gradient descent, with optional (Nesterov) momentum and L2 weight decay.

    Matches torch.optim.SGD(lr, momentum, dampening=0, weight_decay, nesterov): the decay
    is added to the gradient before the momentum.

    Args:
      learning_rate: a non-negative number or a schedule.
      momentum: the momentum coefficient in [0, 1), or None for none.
      nesterov: use Nesterov momentum (needs `momentum`).
      weight_decay: the L2 coefficient.
      mask: which leaves get weight decay (see `add_decayed_weights`).

    Returns:
      A `GradientTransformation`.

    Example:
      opt = sgd(0.1, momentum=0.9, nesterov=True)
      opt_state = opt.init(params)
    """
    check_nonneg("sgd", "learning_rate", learning_rate)
    check_unit("sgd", "momentum", momentum)
    check_nonneg("sgd", "weight_decay", weight_decay)
    if nesterov and not _given(momentum):
        raise ValueError("sgd: nesterov=True needs a momentum > 0; pass momentum=0.9, say.")
    return _chain("sgd", add_decayed_weights(weight_decay, mask) if _given(weight_decay) else None,
                  trace(momentum, nesterov) if _given(momentum) else None,
                  scale_by_learning_rate(learning_rate))


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, *, eps_root=0.0, nesterov=False):
    """Adam (Kingma and Ba), as torch.optim.Adam with `weight_decay=0`.

    Args:
      learning_rate: a non-negative number or a schedule.
      b1, b2: decay rates of the moment estimates, in [0, 1).
      eps: added to the denominator, outside the square root.
      eps_root: added inside the square root.
      nesterov: NAdam-style Nesterov momentum.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = adam(1e-3)
      opt_state = opt.init(params)
    """
    check_nonneg("adam", "learning_rate", learning_rate)
    check_unit("adam", "b1", b1)
    check_unit("adam", "b2", b2)
    return _chain("adam", scale_by_adam(b1, b2, eps, eps_root, nesterov=nesterov),
                  scale_by_learning_rate(learning_rate))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4, mask=None, *,
          eps_root=0.0, nesterov=False):
    """Adam with decoupled weight decay, as torch.optim.AdamW.

    Each step is `params -= learning_rate * (adam_direction + weight_decay * params)`.
    The default `weight_decay` is optax's (torch's is 1e-2).

    Args:
      learning_rate: a non-negative number or a schedule.
      b1, b2: decay rates of the moment estimates, in [0, 1).
      eps: added to the denominator, outside the square root.
      weight_decay: the decoupled decay coefficient.
      mask: which leaves get weight decay: a pytree of bools or a function of the params
        (e.g. to leave out biases and norm scales).
      eps_root: added inside the square root.
      nesterov: NAdam-style Nesterov momentum.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = adamw(3e-4, weight_decay=0.1, mask=lambda p: fnad.tree_map(lambda x: x.ndim > 1, p))
      opt_state = opt.init(params)
    """
    check_nonneg("adamw", "learning_rate", learning_rate)
    check_unit("adamw", "b1", b1)
    check_unit("adamw", "b2", b2)
    check_nonneg("adamw", "weight_decay", weight_decay)
    return _chain("adamw", scale_by_adam(b1, b2, eps, eps_root, nesterov=nesterov),
                  add_decayed_weights(weight_decay, mask),
                  scale_by_learning_rate(learning_rate))


def rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
            centered=False, momentum=None, nesterov=False, bias_correction=False):
    """RMSprop, optionally centered and with momentum.

    optax's defaults put `eps` inside the square root; `eps_in_sqrt=False, decay=0.99`
    gives torch.optim.RMSprop's defaults (torch calls `decay` alpha). For torch's
    `weight_decay`, chain `add_decayed_weights(wd)` in front.

    Args:
      learning_rate: a non-negative number or a schedule.
      decay: decay rate of the moving averages, in [0, 1).
      eps: the term added to the denominator.
      initial_scale: the starting value of the second moment.
      eps_in_sqrt: add `eps` inside the square root.
      centered: divide by the estimated standard deviation instead of the RMS.
      momentum: momentum coefficient in [0, 1), or None for none.
      nesterov: use Nesterov momentum.
      bias_correction: bias-correct the moving averages.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = rmsprop(1e-2, decay=0.99, eps_in_sqrt=False)   # torch.optim.RMSprop(lr=1e-2)
      opt_state = opt.init(params)
    """
    check_nonneg("rmsprop", "learning_rate", learning_rate)
    check_unit("rmsprop", "decay", decay)
    check_unit("rmsprop", "momentum", momentum)
    scaler = scale_by_stddev if centered else scale_by_rms
    return _chain("rmsprop", scaler(decay, eps, initial_scale, eps_in_sqrt, bias_correction),
                  scale_by_learning_rate(learning_rate),
                  trace(momentum, nesterov) if _given(momentum) else None)


def adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7, *, eps_in_sqrt=True):
    """Adagrad: steps scaled by the root of the sum of all past squared gradients.

    optax's defaults; `adagrad(lr, 0.0, 1e-10, eps_in_sqrt=False)` is torch.optim.Adagrad,
    and its `lr_decay` is the schedule `lambda count: lr / (1 + count * lr_decay)`.

    Args:
      learning_rate: a non-negative number or a schedule.
      initial_accumulator_value: the starting sum of squares.
      eps: the term added to the denominator.
      eps_in_sqrt: add `eps` inside the square root.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = adagrad(0.1)
      opt_state = opt.init(params)
    """
    check_nonneg("adagrad", "learning_rate", learning_rate)
    return _chain("adagrad",
                  scale_by_adagrad(initial_accumulator_value, eps, eps_in_sqrt=eps_in_sqrt),
                  scale_by_learning_rate(learning_rate))


def lion(learning_rate, b1=0.9, b2=0.99, weight_decay=1e-3, mask=None):
    """Lion (Chen et al. 2023): sign of an interpolated momentum, decoupled weight decay.

    Use a learning rate 3-10x smaller than AdamW's, and a larger weight decay.

    Args:
      learning_rate: a non-negative number or a schedule.
      b1: weight of the momentum in the direction, in [0, 1).
      b2: decay rate of the momentum, in [0, 1).
      weight_decay: the decoupled decay coefficient.
      mask: which leaves get weight decay.

    Returns:
      A `GradientTransformation`.

    Example:
      opt = lion(1e-4, weight_decay=1e-2)
      opt_state = opt.init(params)
    """
    check_nonneg("lion", "learning_rate", learning_rate)
    check_unit("lion", "b1", b1)
    check_unit("lion", "b2", b2)
    return _chain("lion", scale_by_lion(b1, b2), add_decayed_weights(weight_decay, mask),
                  scale_by_learning_rate(learning_rate))


def lamb(learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0, weight_decay=0.0,
         mask=None):
    """LAMB (You et al. 2020): Adam with weight decay, scaled per leaf by a trust ratio.

    Args:
      learning_rate: a non-negative number or a schedule.
      b1, b2: decay rates of the moment estimates, in [0, 1).
      eps: added to the denominator, outside the square root.
      eps_root: added inside the square root.
      weight_decay: the decoupled decay coefficient.
      mask: which leaves get weight decay.

    Returns:
      A `GradientTransformation`; its `update` needs the params.

    Example:
      opt = lamb(1e-3, weight_decay=1e-2)
      opt_state = opt.init(params)
    """
    check_nonneg("lamb", "learning_rate", learning_rate)
    check_unit("lamb", "b1", b1)
    check_unit("lamb", "b2", b2)
    return _chain("lamb", scale_by_adam(b1, b2, eps, eps_root),
                  add_decayed_weights(weight_decay, mask), scale_by_trust_ratio(),
                  scale_by_learning_rate(learning_rate))
