"""Run the fnad.numpy gradient battery and write docs/gradcheck.md.

Usage: python tools/gradcheck_report.py [--out docs/gradcheck.md] [--no-pytest]

For every case of the op tables (tests/numpy/cases.py with cases_shape.py and cases_fft.py
and, when present, tests/numpy/cases_linalg.py and cases_scipy.py) it runs
fnad.test_util.check_grads to the case's order in both modes, measures the error of the JVP
and VJP against five-point finite differences and of forward values and VJPs against
PyTorch (float64), then runs the whole pytest battery of tests/numpy with the thorough
hypothesis profile. One row per op.
"""

import argparse
import os
import pathlib
import platform
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from fnad.test_util import check_grads  # noqa: E402
from tests.numpy.battery import fd_error, torch_error  # noqa: E402
from tests.numpy.casekit import torch  # noqa: E402
from tests.numpy.cases import CASES  # noqa: E402

TORCH_TOL = 1e-10
FD_TOL = 1e-6

CONVENTIONS = """\
## Conventions at kinks and edges

- `max`, `min`, `amax`, `amin` (reductions): tied maxima share the gradient equally
  (PyTorch's `amax`/`amin` and full `max()`/`min()`).
- `maximum`, `minimum`: on ties each argument gets half (as PyTorch). `fmax`, `fmin`: on
  ties the first argument takes all of it, and a NaN argument loses (as PyTorch).
- `clip`: inside the closed interval [a_min, a_max] the gradient goes to `a` (as
  `torch.clamp`); outside it goes to the bound that was applied.
- `abs`, `sign`-like kinks: `abs'(0) = 0`. `sqrt'(0) = inf` (no warning, as PyTorch).
  `linalg.norm` at 0 has gradient 0 and Hessian 0 (as `abs''`); a zero entry of a p < 1
  norm gets 0; `hypot` and `arctan2` at (0, 0) give 0 (PyTorch: NaN and 0).
- `power`: `x ** 0` (and a traced exponent that is 0) has derivative 0 in x at x = 0, to
  every order (PyTorch and autograd), so `c * x ** arange(k)` is exact at 0; `d/dy x**y`
  is 0 at x = 0.
- `sinc`: every derivative is exact at and next to 0 (`sinc''(0) = -pi^2/3`; a Maclaurin
  series for |x| < 1, where PyTorch gives NaN at 0 and cancels badly next to it).
- `prod`, `cumprod`, `at[...].multiply` with repeated indices: exact at zeros and tiny
  values to every order (products of the other factors, never a division there).
- `std`, `nanstd` at zero spread: gradient 0 (as PyTorch's `std`), not NaN.
- `det` at a singular matrix: the cofactor matrix adj(a)^T (exact minors up to 8 x 8, the
  SVD above; PyTorch 2.x returns zeros at exactly singular matrices). `slogdet`'s
  gradient and `inv` raise `LinAlgError` there, naming the function and the shape.
- `xlogy`, `xlog1py`: the x-gradient is 0 where x = 0 (PyTorch); the y-gradient x / y is
  0 there with x-derivative 1 / y (PyTorch), and 0 at x = y = 0.
- `logsumexp` of all `-inf`: `-inf` (SciPy) with gradient 0, not NaN (JAX and PyTorch
  give NaN); also with `b=`.
- `sort`: among ties the gradient follows `argsort(kind="stable")` whatever `kind` is;
  `partition` follows `argpartition` (the same arrangement as NumPy's partition).
- `nan_to_num`: the gradient passes where the entry was finite and is 0 where it was
  replaced. `astype` to an integer or bool dtype (and `np.int64(x)`) has no derivative.
- `eigh`, `eigvalsh`, `cholesky` read one triangle (NumPy's `UPLO`/`upper`): the unread
  triangle and the imaginary part of the diagonal get 0, the read off-diagonal entries
  count twice (the "raw" rows); through a symmetric input the gradient is PyTorch's.
- `svd` of complex matrices: the phase of each pair of singular vectors is a gauge (JAX's
  choice: U turns, V fixed); the rows check phase-invariant functions (|U|, |Vh|, U Vh).
- `sqrtm`: SciPy's principal root, complex (the "(re, im)" rows) where a real matrix has
  a negative eigenvalue.
- Gathers (`x[idx]`, `take`, `take_along_axis`, `repeat` with counts, `pad` non-constant
  modes): repeated indices accumulate in the backward pass (scatter-add); `at[...].set`
  follows NumPy's last-write-wins forward, `at[...].add`/`.multiply` accumulate.
- Complex inputs (JAX's convention, docs/api.md "Complex numbers"): the VJP is the
  transpose of the JVP under Re(sum(u * v)); grad of a real f of z is df/dx - i df/dy
  (the conjugate of PyTorch's `.grad`). The `fft.*` rows pass complex inputs as real and
  imaginary parts and stack complex outputs likewise; tests/numpy/test_complex.py runs
  check_grads with complex directions. `irfft` ignores the imaginary parts of the zero
  (and even-n Nyquist) terms, so they get zero gradient.
- Integer and boolean inputs get no gradient; comparisons, `floor`, `ceil`, `round`,
  `sign`, `argmax`, `argsort`, `nonzero`, ... return values with no gradient and raise
  nothing under transforms.
"""


def load_cases():
    cases = list(CASES)
    try:
        from tests.numpy.cases_linalg import CASES as linalg_cases
        cases += list(linalg_cases)
    except ImportError:
        pass
    try:
        from tests.numpy.cases_scipy import CASES as scipy_cases
        cases += list(scipy_cases)
    except ImportError:
        pass
    return cases


def measure(case):
    row = {"case": case, "fd": None, "torch": None, "check": "ok"}
    try:
        check_grads(case.fun, case.args, order=case.order, modes=case.modes, atol=case.atol,
                    rtol=case.rtol, eps=case.eps)
    except Exception as e:  # reported, not raised: the report shows every failure
        row["check"] = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    try:
        row["fd"] = fd_error(case, eps=case.eps or 1e-3)
    except Exception as e:
        row["check"] = f"fd {type(e).__name__}: {str(e)[:120]}"
    try:
        row["torch"] = torch_error(case)
    except Exception as e:
        row["check"] = f"torch {type(e).__name__}: {str(e)[:120]}"
    return row


def fmt(x):
    return "n/a" if x is None else f"{x:.1e}"


def shapes_str(case):
    return ", ".join("(" + ",".join(map(str, np.shape(a))) + ")" for a in case.args)


def summarize(rows):
    ops = {}
    for r in rows:
        ops.setdefault(r["case"].name, []).append(r)
    table = []
    for name, rs in ops.items():
        fd = [r["fd"] for r in rs if r["fd"] is not None]
        tt = [r["torch"] for r in rs if r["torch"] is not None]
        worst = max(rs, key=lambda r: -1 if r["fd"] is None else r["fd"])
        orders = max(r["case"].order for r in rs)
        modes = sorted({m for r in rs for m in r["case"].modes})
        table.append({
            "name": name, "n": len(rs), "fd": max(fd) if fd else None,
            "torch": max(tt) if tt else None,
            "orders": ("1" if orders == 1 else f"1-{orders}") + " " + "+".join(modes),
            "worst": f"{worst['case'].variant}: {shapes_str(worst['case'])}",
            "failures": [f"{r['case'].id}: {r['check']}" for r in rs if r["check"] != "ok"],
        })
    return table


def run_pytest():
    env = dict(os.environ, HYPOTHESIS_PROFILE="thorough")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/numpy", "-rf", "-p",
                           "no:cacheprovider"], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    summary = lines[-1] if lines else "(no output)"
    failed = [ln for ln in lines if ln.startswith("FAILED")]
    return summary, failed, time.perf_counter() - t0


def write(table, rows, pytest_res, elapsed, out):
    n_cases = len(rows)
    fd_all = [r["fd"] for r in rows if r["fd"] is not None]
    fd_strict = [r["fd"] for r in rows if r["fd"] is not None and r["case"].rtol is None]
    loose = sorted({r["case"].id for r in rows if r["case"].rtol is not None})
    tt_all = [r["torch"] for r in rows if r["torch"] is not None]
    n_torch_ops = sum(1 for t in table if t["torch"] is not None)
    bad_torch = [t["name"] for t in table if t["torch"] is not None and t["torch"] > TORCH_TOL]
    failures = [f for t in table for f in t["failures"]]
    lines = [
        "# Gradient check report",
        "",
        "Written by `python tools/gradcheck_report.py` (do not edit by hand; rerun it).",
        f"NumPy {np.__version__}, PyTorch {torch.__version__ if torch else 'absent'}, "
        f"Python {platform.python_version()}; the op tables ran in {elapsed:.0f} s.",
        "",
        f"- {len(table)} ops, {n_cases} cases (tests/numpy/cases.py, cases_shape.py, "
        "cases_linalg.py, cases_scipy.py, cases_fft.py).",
        f"- Worst error against finite differences: {fmt(max(fd_strict))} over the float64 "
        f"cases (five-point stencil, step 1e-3); {fmt(max(fd_all))} including the cases "
        f"that round through float32 on purpose ({', '.join(loose) or 'none'}).",
        f"- Worst error against PyTorch: {fmt(max(tt_all))} over {n_torch_ops} ops with a "
        f"torch counterpart; rows above {TORCH_TOL:g}: {bad_torch or 'none'}.",
        f"- check_grads failures: {len(failures)}.",
        f"- pytest tests/numpy with HYPOTHESIS_PROFILE=thorough: {pytest_res[0]} "
        f"({pytest_res[2]:.0f} s).",
        "",
        "Errors are normwise relative, max|a - b| / max(max|a|, max|b|, 1e-3): the JVP in a "
        "random direction and <u, VJP(v)> against differences, forward values and the VJP of "
        "a random cotangent against torch.autograd. \"orders\" is the highest order "
        "check_grads verified (fwd: jvp, rev: vjp, nested). \"worst case\" is the case with "
        "the largest finite-difference error.",
        "",
        "| op | cases | max rel err vs FD | max rel err vs torch | orders | worst case |",
        "|---|---:|---:|---:|---|---|",
    ]
    for t in sorted(table, key=lambda t: t["name"]):
        lines.append(f"| `{t['name']}` | {t['n']} | {fmt(t['fd'])} | {fmt(t['torch'])} | "
                     f"{t['orders']} | {t['worst']} |")
    if failures or pytest_res[1]:
        lines += ["", "## Failures", ""] + [f"- {f}" for f in failures + pytest_res[1]]
    lines += ["", CONVENTIONS]
    out.write_text("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "gradcheck.md"))
    ap.add_argument("--no-pytest", action="store_true", help="skip the pytest battery")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = [measure(c) for c in load_cases()]
    elapsed = time.perf_counter() - t0
    table = summarize(rows)
    pytest_res = ("skipped (--no-pytest)", [], 0.0) if args.no_pytest else run_pytest()
    write(table, rows, pytest_res, elapsed, pathlib.Path(args.out))
    worst_t = max((t["torch"] for t in table if t["torch"] is not None), default=0.0)
    print(f"{len(table)} ops, {len(rows)} cases; worst vs torch {worst_t:.1e}; "
          f"pytest: {pytest_res[0]}; wrote {args.out}")


if __name__ == "__main__":
    main()
