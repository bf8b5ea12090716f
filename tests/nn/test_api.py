import subprocess
import sys

import fnad_nn as nn

EXPECTED = """linear embedding layer_norm rms_norm batch_norm dropout feed_forward
scaled_dot_product_attention multi_head_attention sinusoidal_positional_encoding
positional_embedding rotary_embedding rotary_tables transformer_block decoder_block
sequential mlp rnn_cell rnn stacked_rnn bridge lstm lstm_cell gru gru_cell conv2d max_pool2d
avg_pool2d flatten relu leaky_relu gelu silu sigmoid tanh softplus softmax log_softmax
one_hot softmax_cross_entropy sparse_softmax_cross_entropy cross_entropy nll_loss mse_loss
binary_cross_entropy_with_logits""".split()


def test_public_names_documented():
    for name in EXPECTED:
        f = getattr(nn, name)
        assert f.__doc__ and "Example" in f.__doc__ or name.startswith("init_"), name
        init = getattr(nn, "init_" + name, None)
        if init is not None:
            assert init.__doc__, "init_" + name
    for name in nn.init.__dict__:
        if not name.startswith("_") and callable(getattr(nn.init, name)):
            assert getattr(nn.init, name).__doc__, name


def test_no_torch_or_optim_import():
    code = ("import sys, fnad_nn; bad = [m for m in ('torch', 'fnad_optim') if m in sys.modules];"
            "print(bad); sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0
