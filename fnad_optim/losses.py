"""optax.losses' names: per-example losses written with fnad.numpy (see `_losses.py`)."""

from ._losses_more import binary_dice_loss as binary_dice_loss
from ._losses_more import dice_loss as dice_loss
from ._losses_more import (multiclass_generalized_dice_loss as
                           multiclass_generalized_dice_loss)
from ._losses_more import multiclass_sparsemax_loss as multiclass_sparsemax_loss
from ._losses_more import ranking_softmax_loss as ranking_softmax_loss
from ._losses_more import sparsemax_loss as sparsemax_loss
from ._losses import convex_kl_divergence as convex_kl_divergence
from ._losses import cosine_distance as cosine_distance
from ._losses import cosine_similarity as cosine_similarity
from ._losses import ctc_loss as ctc_loss
from ._losses import ctc_loss_with_forward_probs as ctc_loss_with_forward_probs
from ._losses import generalized_kl_divergence as generalized_kl_divergence
from ._losses import hinge_loss as hinge_loss
from ._losses import huber_loss as huber_loss
from ._losses import kl_divergence as kl_divergence
from ._losses import kl_divergence_with_log_targets as kl_divergence_with_log_targets
from ._losses import l2_loss as l2_loss
from ._losses import log_cosh as log_cosh
from ._losses import multiclass_hinge_loss as multiclass_hinge_loss
from ._losses import multiclass_perceptron_loss as multiclass_perceptron_loss
from ._losses import ntxent as ntxent
from ._losses import perceptron_loss as perceptron_loss
from ._losses import poly_loss_cross_entropy as poly_loss_cross_entropy
from ._losses import safe_softmax_cross_entropy as safe_softmax_cross_entropy
from ._losses import sigmoid_binary_cross_entropy as sigmoid_binary_cross_entropy
from ._losses import sigmoid_focal_loss as sigmoid_focal_loss
from ._losses import smooth_labels as smooth_labels
from ._losses import softmax_cross_entropy as softmax_cross_entropy
from ._losses import (softmax_cross_entropy_with_integer_labels as
                      softmax_cross_entropy_with_integer_labels)
from ._losses import squared_error as squared_error
from ._losses import triplet_margin_loss as triplet_margin_loss
