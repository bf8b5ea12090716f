"""Op table, part 3: fnad.numpy.linalg and fnad.scipy.special (format: tests/numpy/cases.py).

Inputs are built to be well conditioned: square matrices are near the identity, symmetric
ones have well-separated eigenvalues, rectangular ones well-separated singular values.
cholesky/eigh read one triangle only: most of their cases symmetrise the input first (the
gradient is then PyTorch's); the "raw" cases feed a matrix with junk in the unread triangle,
whose derivative there must be zero (torch gets the matrix NumPy reads, built explicitly).
Eigen- and singular vectors are made sign-definite (largest-magnitude entry of each vector
positive) so fnad and torch return the same vectors.
"""

import math

import numpy as np

import fnad
import fnad.numpy as fnp
import fnad.scipy.special as fsp
from fnad.extend import getval
from tests.numpy.casekit import OpCase, make_args, shape_id, torch

LA = fnp.linalg


# ----------------------------------------------------------------------------- domains


def _orth(r, shape):
    return np.linalg.qr(r.standard_normal(shape))[0]


def general(r, s):
    """Square, well conditioned: identity-dominated."""
    return r.standard_normal(s) / np.sqrt(s[-1]) + 2.5 * np.eye(s[-1])


def spd(r, s):
    """Symmetric positive definite with eigenvalues spread over [1, 3]."""
    n = s[-1]
    q = _orth(r, s)
    w = np.linspace(1.0, 3.0, n) * r.uniform(0.95, 1.05, s[:-2] + (n,))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def spaced(r, s):
    """Rectangular with singular values spread over [1, 3] (full rank)."""
    m, n = s[-2:]
    k = min(m, n)
    u = _orth(r, s[:-2] + (m, k))
    v = _orth(r, s[:-2] + (n, k))
    sv = np.linspace(3.0, 1.0, k) * r.uniform(0.95, 1.05, s[:-2] + (k,))
    return (u * sv[..., None, :]) @ np.swapaxes(v, -1, -2)


def spd_junk_above(r, s):
    """spd with unrelated values above the diagonal (what eigh(UPLO='L') never reads)."""
    return spd(r, s) + np.triu(r.standard_normal(s), 1)


def spd_junk_below(r, s):
    return spd(r, s) + np.tril(r.standard_normal(s), -1)


def case(name, variant, fun, shapes, domains, tfun, order=2, **kw):
    return OpCase(name, variant, fun, make_args(name, variant, domains, shapes), tfun, order,
                  **kw)


# ----------------------------------------------------------------------------- helpers


def fsym(a):
    return (a + fnp.swapaxes(a, -1, -2)) / 2


def tsym(t):
    return (t + t.transpose(-1, -2)) / 2


def t_read(t, lower=True):
    """The symmetric matrix NumPy's eigh/cholesky read from one triangle of `t`."""
    part = torch.tril(t, -1) if lower else torch.triu(t, 1)
    return part + part.transpose(-1, -2) + torch.diag_embed(torch.diagonal(t, 0, -2, -1))


def _pick_sign(v, mod):
    """Signs of each column's largest-magnitude entry (piecewise constant: no derivative)."""
    if mod == "torch":
        vv = v.detach().numpy()
        idx = np.argmax(np.abs(vv), axis=-2)[..., None, :]
        return torch.from_numpy(np.sign(np.take_along_axis(vv, idx, axis=-2)))
    vv = fnad.stop_gradient(getval(v))  # fnp, so that it stages under jit
    idx = fnp.expand_dims(fnp.argmax(fnp.abs(vv), axis=-2), -2)
    return fnp.sign(fnp.take_along_axis(vv, idx, axis=-2))


def f_eigh(a):
    w, v = LA.eigh(fsym(a))
    return w, v * _pick_sign(v, "np")


def t_eigh(t):
    w, v = torch.linalg.eigh(tsym(t))
    return w, v * _pick_sign(v, "torch")


def f_eigh_upper(a):
    w, v = LA.eigh(a, UPLO="U")
    return w, v * _pick_sign(v, "np")


def t_eigh_upper(t):
    w, v = torch.linalg.eigh(t_read(t, lower=False))
    return w, v * _pick_sign(v, "torch")


def f_svd(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    sg = _pick_sign(u, "np")
    return u * sg, s, vh * np.swapaxes(sg, -1, -2)


def t_svd(t):
    u, s, vh = torch.linalg.svd(t, full_matrices=False)
    sg = _pick_sign(u, "torch")
    return u * sg, s, vh * sg.transpose(-1, -2)


SQ = [(3, 3), (2, 4, 4)]
RECT = [(3, 3), (4, 3), (3, 5), (2, 4, 3)]

# ----------------------------------------------------------------------------- linalg

LINALG = []
for _s in SQ + [(1, 1)]:
    _v = shape_id((_s,))
    LINALG += [
        case("linalg.inv", _v, LA.inv, (_s,), (general,),
             lambda t: torch.linalg.inv(t)),
        case("linalg.det", _v, LA.det, (_s,), (general,), lambda t: torch.linalg.det(t)),
        case("linalg.slogdet", _v, lambda a: tuple(LA.slogdet(a)), (_s,), (general,),
             lambda t: tuple(torch.linalg.slogdet(t))),
        case("linalg.cholesky", _v, lambda a: LA.cholesky(fsym(a)), (_s,), (spd,),
             lambda t: torch.linalg.cholesky(tsym(t))),
        case("linalg.cholesky", _v + " upper", lambda a: LA.cholesky(fsym(a), upper=True),
             (_s,), (spd,), lambda t: torch.linalg.cholesky(tsym(t), upper=True)),
        case("linalg.eigh", _v, f_eigh, (_s,), (spd,), t_eigh),
        case("linalg.eigvalsh", _v, lambda a: LA.eigvalsh(fsym(a)), (_s,), (spd,),
             lambda t: torch.linalg.eigvalsh(tsym(t))),
        case("linalg.matrix_power", _v + " n=3", lambda a: LA.matrix_power(a, 3), (_s,),
             (general,), lambda t: torch.linalg.matrix_power(t, 3)),
        case("linalg.matrix_power", _v + " n=-2", lambda a: LA.matrix_power(a, -2), (_s,),
             (general,), lambda t: torch.linalg.matrix_power(t, -2)),
        case("linalg.cond", _v, LA.cond, (_s,), (spaced,), lambda t: torch.linalg.cond(t)),
    ]
for _s in SQ:
    _v = shape_id((_s,)) + " raw"
    LINALG += [
        case("linalg.eigvalsh", _v + " UPLO=L", LA.eigvalsh, (_s,), (spd_junk_above,),
             lambda t: torch.linalg.eigvalsh(t_read(t))),
        case("linalg.eigvalsh", _v + " UPLO=U", lambda a: LA.eigvalsh(a, UPLO="U"), (_s,),
             (spd_junk_below,), lambda t: torch.linalg.eigvalsh(t_read(t, False))),
        case("linalg.eigh", _v + " UPLO=U", f_eigh_upper, (_s,), (spd_junk_below,),
             t_eigh_upper),
        case("linalg.cholesky", _v, LA.cholesky, (_s,), (spd_junk_above,),
             lambda t: torch.linalg.cholesky(t_read(t))),
        case("linalg.cholesky", _v + " upper", lambda a: LA.cholesky(a, upper=True), (_s,),
             (spd_junk_below,), lambda t: torch.linalg.cholesky(t_read(t, False), upper=True)),
    ]
for _s in RECT:
    _v = shape_id((_s,))
    LINALG += [
        case("linalg.svd", _v, f_svd, (_s,), (spaced,), t_svd),
        case("linalg.svdvals", _v, LA.svdvals, (_s,), (spaced,),
             lambda t: torch.linalg.svdvals(t)),
        case("linalg.qr", _v, lambda a: tuple(LA.qr(a)), (_s,), (spaced,),
             lambda t: tuple(torch.linalg.qr(t))),
        case("linalg.pinv", _v, LA.pinv, (_s,), (spaced,), lambda t: torch.linalg.pinv(t)),
    ]
    for _o in [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        LINALG.append(case(
            "linalg.norm", f"{_v} ord={_o} axis=(-2,-1)",
            lambda a, _o=_o: LA.norm(a, _o, axis=(-2, -1)), (_s,), (spaced,),
            lambda t, _o=_o: torch.linalg.matrix_norm(t, "fro" if _o is None else _o)))


def _complex_svd_parts(a, mod):
    """Phase-invariant parts of a complex SVD: |U|, S, |Vh| and the rank-1 term's real and
    imaginary parts."""
    if mod == "torch":
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        r1 = u[..., :1] * s[..., None, :1] @ vh[..., :1, :]
        return u.abs(), s, vh.abs(), r1.real, r1.imag
    u, s, vh = LA.svd(a, full_matrices=False)
    r1 = fnp.matmul(u[..., :1] * s[..., None, :1], vh[..., :1, :])
    return fnp.abs(u), s, fnp.abs(vh), fnp.real(r1), fnp.imag(r1)


# Complex input through its real and imaginary parts (x, y) -> x + iy (issue 21).
for _s in [(3, 3), (4, 3), (3, 5), (2, 4, 3)]:
    _v = shape_id((_s,)) + " complex (re, im)"
    LINALG += [
        case("linalg.svd", _v, lambda x, y: _complex_svd_parts(x + 1j * y, "np"), (_s, _s),
             ("real", "real"), lambda x, y: _complex_svd_parts(torch.complex(x, y), "torch"),
             eps=1e-5),
        case("linalg.norm", _v + " ord='nuc'",
             lambda x, y: LA.norm(x + 1j * y, "nuc", axis=(-2, -1)), (_s, _s),
             ("real", "real"),
             lambda x, y: torch.linalg.matrix_norm(torch.complex(x, y), "nuc")),
    ]
LINALG += [
    case("linalg.norm", "(2,3,4) ord='nuc' axis=(2,0) keepdims",
         lambda a: LA.norm(a, "nuc", axis=(2, 0), keepdims=True), ((2, 3, 4),), ("real",),
         lambda t: torch.linalg.matrix_norm(t, "nuc", dim=(2, 0), keepdim=True)),
    case("linalg.norm", "(2,3,4) ord=1 axis=(2,0)", lambda a: LA.norm(a, 1, axis=(2, 0)),
         ((2, 3, 4),), ("real",), lambda t: torch.linalg.matrix_norm(t, 1, dim=(2, 0))),
    case("linalg.norm", "(2,3) ord=None", LA.norm, ((2, 3),), ("real",),
         lambda t: torch.linalg.vector_norm(t)),
    case("linalg.norm", "(2,1,3) ord=None keepdims", lambda a: LA.norm(a, keepdims=True),
         ((2, 1, 3),), ("real",), lambda t: torch.linalg.vector_norm(t, keepdim=True)),
    case("linalg.matrix_norm", "(2,4,3) nuc", lambda a: LA.matrix_norm(a, ord="nuc"),
         ((2, 4, 3),), (spaced,), lambda t: torch.linalg.matrix_norm(t, "nuc")),
    case("linalg.vector_norm", "(2,3,4) ord=3 axis=(0,2)",
         lambda a: LA.vector_norm(a, ord=3, axis=(0, 2)), ((2, 3, 4),), ("nonzero",),
         lambda t: torch.linalg.vector_norm(t, 3, dim=(0, 2))),
]
for _s in [(5,), (2, 5), (2, 1, 5)]:
    for _o in [None, 1, 2, 3, 0.5, -1, np.inf, -np.inf]:
        LINALG.append(case(
            "linalg.norm", f"{shape_id((_s,))} ord={_o} axis=-1",
            lambda a, _o=_o: LA.norm(a, _o, axis=-1), (_s,), ("nonzero",),
            lambda t, _o=_o: torch.linalg.vector_norm(t, 2 if _o is None else _o, dim=-1)))
LINALG.append(case("linalg.norm", "(2,5) ord=2 axis=0 keepdims",
                   lambda a: LA.norm(a, axis=0, keepdims=True), ((2, 5),), ("nonzero",),
                   lambda t: torch.linalg.vector_norm(t, dim=0, keepdim=True)))
for _sa, _sb in [((3, 3), (3,)), ((2, 3, 3), (2, 3, 4)), ((3, 3), (2, 3, 2)),
                 ((2, 3, 3), (3,)), ((2, 1, 3, 3), (4, 3, 1))]:
    LINALG.append(case(
        "linalg.solve", shape_id((_sa, _sb)), LA.solve, (_sa, _sb), (general, "real"),
        lambda a, b: torch.linalg.solve(a, b)))
LINALG += [
    case("linalg.multi_dot", "(3,)x(3,4)x(4,)", lambda a, b, c: LA.multi_dot([a, b, c]),
         ((3,), (3, 4), (4,)), ("real",) * 3, lambda a, b, c: torch.linalg.multi_dot([a, b, c])),
    case("linalg.multi_dot", "(2,3)x(3,4)x(4,5)x(5,2)",
         lambda a, b, c, d: LA.multi_dot([a, b, c, d]), ((2, 3), (3, 4), (4, 5), (5, 2)),
         ("real",) * 4, lambda a, b, c, d: torch.linalg.multi_dot([a, b, c, d])),
    case("linalg.tensorsolve", "(2,3,6)x(2,3)", LA.tensorsolve, ((2, 3, 6), (2, 3)),
         (lambda r, s: general(r, (6, 6)).reshape(s), "real"),
         lambda a, b: torch.linalg.tensorsolve(a, b)),
    case("linalg.tensorinv", "(4,6,8,3) ind=2", lambda a: LA.tensorinv(a, ind=2),
         ((4, 6, 8, 3),), (lambda r, s: general(r, (24, 24)).reshape(s),),
         lambda t: torch.linalg.tensorinv(t, ind=2), order=1),
    # rank 2 for every perturbation of the factors: pinv is differentiable there
    case("linalg.pinv", "rank 2 (4,2)@(2,3)", lambda b, c: LA.pinv(b @ c), ((4, 2), (2, 3)),
         (spaced, spaced), lambda b, c: torch.linalg.pinv(b @ c)),
]

# eig/eigvals: complex results, checked through real-valued, phase-invariant functions of
# them (real and imaginary parts of the eigenvalues, of each eigenvector divided by its
# first entry).


def nonsym(r, s):
    """Square, non-symmetric, with complex-conjugate eigenvalue pairs well apart."""
    n = s[-1]
    return r.standard_normal(s) + np.diag(np.arange(n) * 1.5)


def _reim(z, mod):
    if mod == "torch":
        return z.real, z.imag
    return fnp.real(z), fnp.real(-1j * z)


def f_eig(a):
    w, v = LA.eig(a)
    return (*_reim(w, "np"), *_reim(v / v[..., :1, :], "np"))


def t_eig(t):
    w, v = torch.linalg.eig(t)
    return (*_reim(w, "torch"), *_reim(v / v[..., :1, :], "torch"))


LINALG += [
    case("linalg.eig", shape_id((_s,)), f_eig, (_s,), (nonsym,), t_eig,
         # the batched 4x4 case has close real eigenvalues (2.28, 2.62): the default
         # step's differences miss its second derivative by 1e-2, a smaller one does not
         eps=1e-5 if len(_s) == 3 else None)
    for _s in [(3, 3), (2, 4, 4), (1, 1)]]
LINALG += [
    case("linalg.eigvals", shape_id((_s,)), lambda a: _reim(LA.eigvals(a), "np"), (_s,),
         (nonsym,), lambda t: _reim(torch.linalg.eigvals(t), "torch"))
    for _s in [(3, 3), (2, 4, 4)]]
for _sa, _sb in [((5, 3), (5,)), ((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 5, 3), (2, 5, 2)),
                 ((3, 3), (3,))]:
    _vec = len(_sb) == 1
    LINALG.append(case(
        "linalg.lstsq", shape_id((_sa, _sb)), lambda a, b: tuple(LA.lstsq(a, b))[:2],
        (_sa, _sb), (spaced, "real"),
        lambda a, b, _vec=_vec: _t_lstsq(a, b, _vec)))
# rank 2 for every perturbation of the factors: the minimum-norm solution is differentiable
LINALG.append(case("linalg.lstsq", "rank 2 (5,2)@(2,3)x(5,)",
                   lambda p, q, b: LA.lstsq(p @ q, b)[0], ((5, 2), (2, 3), (5,)),
                   (spaced, spaced, "real"),
                   lambda p, q, b: torch.linalg.pinv(p @ q) @ b))


def _t_lstsq(a, b, vec):
    x = torch.linalg.pinv(a) @ (b[..., None] if vec else b)
    m, n = a.shape[-2:]
    r = ((b[..., None] if vec else b) - a @ x).pow(2).sum(-2)
    return (x[..., 0] if vec else x), (r if m > n else torch.zeros(0, dtype=a.dtype))


# ----------------------------------------------------------------------------- special


def _unary(name, domain, tfun, shapes=((), (3,), (2, 3), (2, 1, 3)), fun=None, order=2):
    f = fun or getattr(fsp, name)
    return [case("special." + name, shape_id((s,)), f, (s,), (domain,), tfun, order)
            for s in shapes]


def _uniform(lo, hi):
    return lambda r, s: r.uniform(lo, hi, s)


# torch's trigamma (polygamma(1, .), also digamma's derivative) is accurate only to ~5e-10
# for small arguments. The exact recurrence psi^(n)(x) = psi^(n)(x + 6) + (-1)^(n+1) n!
# sum_k (x + k)^-(n+1) moves torch's evaluation to x + 6, where it is accurate to ~1e-14.
def _t_polygamma(n, t):
    shifted = torch.special.polygamma(n, t + 6)
    if n == 0:
        return shifted - sum(1 / (t + k) for k in range(6))
    return shifted + (-1) ** (n + 1) * math.factorial(n) * sum(
        (t + k) ** -(n + 1) for k in range(6))


def _t_digamma(t):
    return _t_polygamma(0, t)


SPECIAL = (
    _unary("erf", _uniform(-3, 3), lambda t: torch.special.erf(t))
    + _unary("erfc", _uniform(-3, 5), lambda t: torch.special.erfc(t))
    + _unary("erfinv", _uniform(-0.9, 0.9), lambda t: torch.special.erfinv(t))
    + _unary("gammaln", _uniform(0.2, 6), lambda t: torch.special.gammaln(t))
    + _unary("gammaln", _uniform(-2.9, -2.1), lambda t: torch.special.gammaln(t),
             shapes=[(4,)])
    + _unary("digamma", _uniform(0.3, 6), lambda t: _t_digamma(t))
    + _unary("digamma", _uniform(-1.9, -1.1), lambda t: _t_digamma(t), shapes=[(4,)])
    + _unary("expit", _uniform(-8, 8), lambda t: torch.special.expit(t))
    + _unary("logit", _uniform(0.05, 0.95), lambda t: torch.special.logit(t))
    + [case("special.polygamma", f"n={n} (2,3)", lambda x, _n=n: fsp.polygamma(_n, x),
            ((2, 3),), (_uniform(0.5, 4),),
            lambda t, _n=n: _t_polygamma(_n, t)) for n in (0, 1, 2, 4)]
    + [case("special.xlogy", shape_id(p), fsp.xlogy, p, ("real", _uniform(0.5, 3)),
            lambda a, b: torch.special.xlogy(a, b)) for p in [((3,), (3,)), ((2, 1), (3,))]]
    + [case("special.xlog1py", shape_id(p), fsp.xlog1py, p, ("real", _uniform(-0.5, 3)),
            lambda a, b: torch.special.xlog1py(a, b)) for p in [((3,), (3,)), ((2, 1), (3,))]]
)
for _s, _axis, _kd in [((5,), None, False), ((2, 3), None, True), ((2, 3), 1, False),
                       ((2, 3, 4), (0, 2), False), ((2, 1, 3), -1, True)]:
    _v = f"{shape_id((_s,))} axis={_axis}" + (" keepdims" if _kd else "")
    _dims = tuple(range(len(_s))) if _axis is None else _axis
    SPECIAL += [
        case("special.logsumexp", _v,
             lambda x, _a=_axis, _k=_kd: fsp.logsumexp(x, axis=_a, keepdims=_k),
             (_s,), ("real",), lambda t, _d=_dims, _k=_kd: torch.logsumexp(t, _d, _k)),
        case("special.logsumexp", _v + " b", lambda x, b, _a=_axis, _k=_kd:
             fsp.logsumexp(x, axis=_a, b=b, keepdims=_k), (_s, _s[-1:]),
             ("real", _uniform(0.5, 2)), lambda t, b, _d=_dims, _k=_kd:
             torch.logsumexp(t + torch.log(b), _d, _k)),
    ]
for _s, _axis in [((5,), None), ((2, 3), 1), ((2, 3), 0), ((2, 1, 3), -1)]:
    _v = f"{shape_id((_s,))} axis={_axis}"
    _tdim = 0 if _axis is None else _axis
    SPECIAL += [
        case("special.softmax", _v, lambda x, _a=_axis: fsp.softmax(x, axis=_a), (_s,),
             ("real",), lambda t, _d=_tdim: torch.softmax(t, _d)),
        case("special.log_softmax", _v, lambda x, _a=_axis: fsp.log_softmax(x, axis=_a),
             (_s,), ("real",), lambda t, _d=_tdim: torch.log_softmax(t, _d)),
    ]
SPECIAL += [
    case("special.softmax", "(2,3) axis=None", fsp.softmax, ((2, 3),), ("real",),
         lambda t: torch.softmax(t.reshape(-1), 0).reshape(2, 3)),
    case("special.logsumexp", "(3,) scale 1e4", lambda x: fsp.logsumexp(1e4 * x), ((3,),),
         ("real",), lambda t: torch.logsumexp(1e4 * t, 0)),
]

CASES = LINALG + SPECIAL
