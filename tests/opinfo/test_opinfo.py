"""Differential tests driven by PyTorch's OpInfo database (`op_db`, shipped in the torch
wheel): each OpInfo mapped in tests/opinfo/mapping.py runs its float64 and complex128 samples
through five checks against torch:

- value: fnad's result equals torch's (NumPy/SciPy decide the deliberate differences listed
  in tests/opinfo/known.py);
- vjp, jvp: fnad's VJP (random cotangent) and JVP (random tangent) equal torch's autograd and
  forward mode, to 1e-9 relative, in fnad's complex convention (conj of torch's .grad);
- jit: `fnad.jit(f)` equals eager `f` bit for bit (dtype and shape too);
- vmap: `fnad.vmap(f)` over a batch of two equals the loop.

The default run takes the first sample fnad can take of each OpInfo, in one dtype (float64
and complex128 alternate over the OpInfos); `-m opinfo` runs every sample of both. Defects
still open are xfail (not strict) with the defect named; counts per check come from
`python tools/opinfo_report.py`.
"""

import warnings

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from tests.opinfo import harness
from tests.opinfo.mapping import MAPPING

NAMES = sorted(MAPPING)


def _all_cases(name, dtype):
    return harness.cases(name, dtype)[0]


def _run(name, check, get_cases, dtypes=harness.DTYPES):
    failed, xfails, ran = [], [], 0
    for dtype in dtypes:
        with warnings.catch_warnings():       # torch's sample makers warn (sparse, ...)
            warnings.simplefilter("ignore")
            cs = get_cases(name, dtype)
        for case in cs:
            outcome, msg = harness.outcome(case, check, dtype)
            ran += outcome != "skipped"
            if outcome == "failed":
                failed.append(f"{dtype}: {msg}")
            elif outcome == "xfailed":
                xfails.append(harness.xfail_reason(name, check, dtype, case))
    if failed:
        pytest.fail(f"{name} {check}: {len(failed)} sample(s) fail\n" + "\n".join(failed[:3]))
    if xfails:
        pytest.xfail(xfails[0])
    if not ran:
        pytest.skip(f"{name}: no sample {check} applies to")


@pytest.mark.parametrize("check", harness.CHECKS)
@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_opinfo_quick(name, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dtype = harness.quick_dtype(name)
    _run(name, check, harness.quick_cases, (dtype,))


@pytest.mark.opinfo
@pytest.mark.parametrize("check", harness.CHECKS)
@pytest.mark.parametrize("name", NAMES, ids=NAMES)
def test_opinfo_full(name, check):
    _run(name, check, _all_cases)


def test_at_least_400_opinfos_are_mapped():
    assert len(MAPPING) >= 400
    assert not set(MAPPING) - set(harness.ops()), "mapped names that are not OpInfos"
