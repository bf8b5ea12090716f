"""What README.md and docs/jit.md say about control flow and vmap is true of the code."""

import pathlib
import re

import numpy as np
import pytest

import fnad
import fnad.numpy as fnp

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _text(name):
    return " ".join((ROOT / name).read_text().split())  # line breaks as spaces


def branchy(x):
    if fnp.sum(x) > 0 and int(x[0] > 0) and x[1] > 0:  # Python control flow on traced values
        return fnp.sum(x ** 3)
    return -fnp.sum(x)


def test_readme_says_where_python_control_flow_works():
    readme = _text("README.md")
    assert "Python control flow on traced values works. " not in readme
    assert ("works under the differentiation transforms (`grad`, `vjp`, `jvp`, `jacrev`, "
            "`hessian`, ...), where values are concrete; not under `jit`") in readme
    assert "or `vmap` (a TypeError)" in readme


@pytest.mark.parametrize("transform", [fnad.grad, fnad.jacrev, fnad.jacfwd, fnad.hessian,
                                       lambda f: lambda x: fnad.jvp(f, (x,), (x,))[1]])
def test_python_control_flow_works_under_differentiation(transform):
    assert np.all(np.isfinite(transform(branchy)(np.ones(3))))


def test_python_control_flow_raises_under_jit_and_vmap():
    with pytest.raises(fnad.ConcretizationError):
        fnad.jit(branchy)(np.ones(3))
    with pytest.raises(TypeError, match="vmap: bool"):
        fnad.vmap(branchy)(np.ones((2, 3)))


def test_jit_doc_has_no_text_from_before_vmap_and_lax():
    jit = _text("docs/jit.md")
    for stale in ("when it exists", "arrives with the vmap issue", "of the vmap issue"):
        assert stale not in jit, stale


def test_vmap_of_jit_replays_the_graph():
    f = fnad.jit(lambda x: fnp.sum(fnp.tanh(x) ** 2))
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    np.testing.assert_allclose(fnad.vmap(f)(x), np.sum(np.tanh(x) ** 2, axis=1), rtol=1e-14)


def test_readme_says_which_tests_need_the_data_sets_and_how_to_get_them():
    """Every test file with a test that skips without Fashion-MNIST or TinyShakespeare is
    named in README.md, with where the tests look and how to download them (issue 31)."""
    readme = _text("README.md")
    mark = re.compile(r"^@needs_(fashion|shakespeare)\b", re.M)
    users = sorted({p.name for p in (ROOT / "tests").rglob("test_*.py")
                    if mark.search(p.read_text())})
    assert users, "no test needs a data set any more: update this test and README.md"
    for name in users:
        assert f"{name}" in readme, f"README.md does not say that {name} needs a data set"
    for needle in ("FNAD_DATA_DIR", "../shared/data", "data.resolve_files(", "-rs"):
        assert needle in readme, needle
