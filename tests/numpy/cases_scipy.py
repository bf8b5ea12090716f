"""Op table, part 4: fnad.scipy.special additions, fnad.scipy.linalg, fnad.scipy.signal and
fnad.scipy.stats (format: tests/numpy/cases.py).

Shape parameters of the incomplete beta function (betainc's a and b, and so the t/beta
cdf's and binom's n) carry no derivative, gammainc's a a first derivative only: cases close
over them or check order 1. Torch parity uses torch.special, torch.linalg,
torch.nn.functional convolutions and torch.distributions (validate_args off).
"""

import numpy as np

import fnad.numpy as fnp
import fnad.scipy.integrate as fint
import fnad.scipy.linalg as fla
import fnad.scipy.signal as fsig
import fnad.scipy.special as fsp
import fnad.scipy.stats as fst
from tests.numpy.casekit import OpCase, make_args, shape_id, torch
from tests.numpy.cases_linalg import general, spd

TD = torch.distributions if torch is not None else None


def case(name, variant, fun, shapes, domains, tfun, order=2, **kw):
    return OpCase(name, variant, fun, make_args(name, variant, domains, shapes), tfun, order,
                  **kw)


def _u(lo, hi):
    return lambda r, s: r.uniform(lo, hi, s)


def _fixed(*values):
    return lambda r, s: np.broadcast_to(np.array(values, dtype=np.float64), s).copy()


def _tsign_gamma(t):
    return torch.exp(torch.special.gammaln(t))


# ----------------------------------------------------------------------------- special

SP = [
    case("special.gamma", "(2,3)", fsp.gamma, ((2, 3),), (_u(0.3, 5),), _tsign_gamma),
    case("special.gamma", "(4,) negative", fsp.gamma, ((4,),), (_u(-2.8, -2.2),), None),
    case("special.rgamma", "(2,3)", fsp.rgamma, ((2, 3),), (_u(0.3, 5),),
         lambda t: torch.exp(-torch.special.gammaln(t))),
    case("special.rgamma", "(4,) negative", fsp.rgamma, ((4,),), (_u(-1.8, -1.2),), None),
    case("special.beta", "(2,3)x(3,)", fsp.beta, ((2, 3), (3,)), (_u(0.5, 4), _u(0.5, 4)),
         lambda a, b: torch.exp(torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b))),
    case("special.betaln", "(3,)x(3,)", fsp.betaln, ((3,), (3,)), (_u(0.5, 4), _u(0.5, 4)),
         lambda a, b: torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)),
    case("special.multigammaln", "(2,3) d=3", lambda a: fsp.multigammaln(a, 3), ((2, 3),),
         (_u(1.5, 5),), lambda t: torch.special.multigammaln(t, 3)),
    case("special.erfcx", "(2,3)", fsp.erfcx, ((2, 3),), (_u(-2, 6),),
         lambda t: torch.special.erfcx(t)),
    case("special.erfcinv", "(2,3)", fsp.erfcinv, ((2, 3),), (_u(0.1, 1.9),),
         lambda t: torch.special.erfinv(1 - t)),
    case("special.ndtr", "(2,3)", fsp.ndtr, ((2, 3),), (_u(-5, 5),),
         lambda t: torch.special.ndtr(t)),
    case("special.ndtri", "(2,3)", fsp.ndtri, ((2, 3),), (_u(0.1, 0.9),),
         lambda t: torch.special.ndtri(t)),
    case("special.log_ndtr", "(2,3)", fsp.log_ndtr, ((2, 3),), (_u(-8, 8),),
         lambda t: torch.special.log_ndtr(t)),
    case("special.log_ndtr", "(3,) far tail", fsp.log_ndtr, ((3,),), (_u(-60, -30),),
         lambda t: torch.special.log_ndtr(t)),
    case("special.gammainc", "(2,3) a=(3,) const", lambda x: fsp.gammainc(
        np.array([0.5, 2.5, 7.0]), x), ((2, 3),), (_u(0.3, 9),),
         lambda t: torch.special.gammainc(torch.tensor([0.5, 2.5, 7.0], dtype=t.dtype), t)),
    case("special.gammaincc", "(2,3) a=(3,) const", lambda x: fsp.gammaincc(
        np.array([0.5, 2.5, 7.0]), x), ((2, 3),), (_u(0.3, 9),),
         lambda t: torch.special.gammaincc(torch.tensor([0.5, 2.5, 7.0], dtype=t.dtype), t)),
    case("special.gammainc", "(3,)x(3,) in a and x, order 1", fsp.gammainc, ((3,), (3,)),
         (_fixed(0.7, 2.5, 9.0), _fixed(0.5, 3.0, 12.0)), None, order=1),
    case("special.gammaincc", "(3,)x(2,3) in a and x, order 1", fsp.gammaincc, ((3,), (2, 3)),
         (_u(0.5, 6), _u(0.3, 9)), None, order=1),
    case("special.betainc", "(2,3) a, b const", lambda x: fsp.betainc(
        np.array([0.7, 2.5, 4.0]), 1.5, x), ((2, 3),), (_u(0.15, 0.85),), None),
    case("special.gammaincinv", "(2,3) a=(3,) const", lambda p: fsp.gammaincinv(
        np.array([0.5, 2.5, 7.0]), p), ((2, 3),), (_u(0.1, 0.9),), None),
    case("special.betaincinv", "(2,3) a, b const", lambda p: fsp.betaincinv(
        np.array([0.7, 2.5, 4.0]), 1.5, p), ((2, 3),), (_u(0.1, 0.9),), None),
]

_BESSEL_X = lambda r, s: r.choice([1.0, 4.0, 9.0, 30.0], s) + r.uniform(0, 2, s)
for _n in ("j0", "j1", "y0", "y1"):
    SP.append(case(f"special.{_n}", "(2,3)", getattr(fsp, _n), ((2, 3),), (_BESSEL_X,), None))
for _n in ("i0", "i1", "i0e", "i1e"):
    SP.append(case(f"special.{_n}", "(2,3)", getattr(fsp, _n), ((2, 3),), (_u(-6, 6),),
                   lambda t, _n=_n: getattr(torch.special, _n)(t)))
SP += [
    case("special.jn", "n=(3,1) (3,)", lambda x: fsp.jn(np.array([[0], [3], [-2]]), x),
         ((3,),), (_BESSEL_X,), None),
    case("special.yn", "n=(3,1) (3,)", lambda x: fsp.yn(np.array([[0], [3], [-2]]), x),
         ((3,),), (_BESSEL_X,), None),
    case("special.iv", "v=(3,1) (3,)", lambda x: fsp.iv(np.array([[0.0], [2.5], [-1.3]]), x),
         ((3,),), (_u(0.5, 40),), None),
    case("special.ive", "v=(3,1) (3,)", lambda x: fsp.ive(np.array([[0.0], [2.5], [7.0]]), x),
         ((3,),), (_u(0.5, 40),), None),
]



def _re_im(z):
    """A complex result as real numbers: the table's checks run on real values."""
    return fnp.stack([fnp.real(z), fnp.imag(z)])


def _at_complex(f):
    """f(x + iy) as a function of the real pair (x, y): complex inputs through the table."""
    return lambda x, y: _re_im(f(x + 1j * y))


# Complex input (issue 21): the error functions through the Faddeeva function; points off
# the real axis out to |z| ~ 3.
for _n in ("erf", "erfc", "erfcx", "wofz", "ndtr", "log_ndtr"):
    SP.append(case(f"special.{_n}", "(2,3) complex (re, im)", _at_complex(getattr(fsp, _n)),
                   ((2, 3), (2, 3)), (_u(-2, 2), _u(-2, 2)), None))
SP += [
    case("special.wofz", "(2,3) real", lambda x: _re_im(fsp.wofz(x)), ((2, 3),), (_u(-4, 4),),
         None),
    # gammasgn is piecewise constant: the product rule must see a zero derivative in it.
    case("special.gammasgn", "(2,3) times x", lambda x: fsp.gammasgn(x) * x, ((2, 3),),
         (lambda r, s: r.choice([-2.5, -1.5, -0.5, 0.5, 2.5], s) + r.uniform(-0.3, 0.3, s),),
         None),
    case("special.softmax", "(2,3) complex (re, im) axis=1",
         _at_complex(lambda z: fsp.softmax(z, axis=1)), ((2, 3), (2, 3)), ("real", "real"),
         None),
]

# ----------------------------------------------------------------------------- linalg


def _perm_general(r, s):
    """Well conditioned, rows shuffled so partial pivoting permutes."""
    a = general(r, s)
    return a[..., r.permutation(s[-2]), :]


def _tsym(t):
    return (t + t.transpose(-1, -2)) / 2


def _fsym(a):
    return (a + a.swapaxes(-1, -2)) / 2


def _indefinite(r, s):
    """Symmetric with eigenvalues -2, -1, 1.5 (a complex principal square root)."""
    q = np.linalg.qr(r.standard_normal(s))[0]
    return (q * np.array([-2.0, -1.0, 1.5])) @ q.T


def _indefinite_general(r, s):
    """Non-symmetric with real eigenvalues -2, -1, 1.5."""
    v = general(r, s)
    return (v * np.array([-2.0, -1.0, 1.5])) @ np.linalg.inv(v)


def _t_lu_factor(t):
    return torch.linalg.lu_factor(t)[0]


LA = [
    case("scipy.linalg.solve_triangular", "(3,3)x(3,2) lower",
         lambda a, b: fla.solve_triangular(a, b, lower=True), ((3, 3), (3, 2)),
         (general, "real"), lambda a, b: torch.linalg.solve_triangular(a, b, upper=False)),
    case("scipy.linalg.solve_triangular", "(3,3)x(3,) upper trans=1",
         lambda a, b: fla.solve_triangular(a, b, trans=1), ((3, 3), (3,)),
         (general, "real"), lambda a, b: torch.linalg.solve_triangular(
             a.triu().T, b[:, None], upper=False)[:, 0]),
    case("scipy.linalg.solve_triangular", "(2,3,3)x(2,3,2) unit_diagonal",
         lambda a, b: fla.solve_triangular(a, b, lower=True, unit_diagonal=True),
         ((2, 3, 3), (2, 3, 2)), (general, "real"), lambda a, b: torch.linalg.solve_triangular(
             a, b, upper=False, unitriangular=True)),
    case("scipy.linalg.cholesky", "(3,3) upper", lambda a: fla.cholesky(_fsym(a)), ((3, 3),),
         (spd,), lambda t: torch.linalg.cholesky(_tsym(t), upper=True)),
    case("scipy.linalg.cholesky", "(2,3,3) lower", lambda a: fla.cholesky(_fsym(a), lower=True),
         ((2, 3, 3),), (spd,), lambda t: torch.linalg.cholesky(_tsym(t))),
    case("scipy.linalg.cho_solve", "(3,3)x(3,2)",
         lambda a, b: fla.cho_solve(fla.cho_factor(_fsym(a)), b), ((3, 3), (3, 2)),
         (spd, "real"), lambda a, b: torch.cholesky_solve(b, torch.linalg.cholesky(_tsym(a)))),
    case("scipy.linalg.lu", "(4,4)", lambda a: tuple(fla.lu(a))[1:], ((4, 4),),
         (_perm_general,), lambda t: tuple(torch.linalg.lu(t))[1:]),
    case("scipy.linalg.lu", "(2,3,3)", lambda a: tuple(fla.lu(a))[1:], ((2, 3, 3),),
         (_perm_general,), lambda t: tuple(torch.linalg.lu(t))[1:]),
    case("scipy.linalg.lu_factor", "(4,4)", lambda a: fla.lu_factor(a)[0], ((4, 4),),
         (_perm_general,), _t_lu_factor),
    case("scipy.linalg.lu_solve", "(4,4)x(4,2)", lambda a, b: fla.lu_solve(fla.lu_factor(a), b),
         ((4, 4), (4, 2)), (_perm_general, "real"), lambda a, b: torch.linalg.solve(a, b)),
    case("scipy.linalg.lu_solve", "(3,3)x(3,) trans=1",
         lambda a, b: fla.lu_solve(fla.lu_factor(a), b, trans=1), ((3, 3), (3,)),
         (_perm_general, "real"), lambda a, b: torch.linalg.solve(a.T, b)),
    case("scipy.linalg.expm", "(3,3)", fla.expm, ((3, 3),), ("real",),
         lambda t: torch.linalg.matrix_exp(t)),
    case("scipy.linalg.expm", "(2,3,3) scaled", lambda a: fla.expm(4 * a), ((2, 3, 3),),
         ("real",), lambda t: torch.linalg.matrix_exp(4 * t)),
    case("scipy.linalg.sqrtm", "(3,3) spd", lambda a: fla.sqrtm(_fsym(a)), ((3, 3),), (spd,),
         None),
    case("scipy.linalg.sqrtm", "(3,3) general", fla.sqrtm, ((3, 3),), (general,), None),
    case("scipy.linalg.sqrtm", "(3,3) symmetric, negative eigenvalues (re, im)",
         lambda a: _re_im(fla.sqrtm(_fsym(a))), ((3, 3),), (_indefinite,), None),
    case("scipy.linalg.sqrtm", "(3,3) negative eigenvalues (re, im)",
         lambda a: _re_im(fla.sqrtm(a)), ((3, 3),), (_indefinite_general,), None),
    case("scipy.linalg.solve_sylvester", "(3,3)x(2,2)x(3,2)", fla.solve_sylvester,
         ((3, 3), (2, 2), (3, 2)), (general, general, "real"), None),
    case("scipy.linalg.solve_banded", "(1,1) (3,4)x(4,2)",
         lambda ab, b: fla.solve_banded((1, 1), ab, b), ((3, 4), (4, 2)),
         (lambda r, s: r.uniform(-0.5, 0.5, s) + np.array([[0.0], [3.0], [0.0]]), "real"),
         None),
    case("scipy.linalg.block_diag", "(2,2)x(3,)x()", fla.block_diag, ((2, 2), (3,), ()),
         ("real",) * 3, lambda a, b, c: torch.block_diag(a, b, c)),
    case("scipy.linalg.inv", "(3,3)", fla.inv, ((3, 3),), (general,),
         lambda t: torch.linalg.inv(t)),
    case("scipy.linalg.det", "(2,3,3)", fla.det, ((2, 3, 3),), (general,),
         lambda t: torch.linalg.det(t)),
    case("scipy.linalg.solve", "(3,3)x(3,) assume_a='pos'",
         lambda a, b: fla.solve(a, b, assume_a="pos"), ((3, 3), (3,)), (spd, "real"),
         lambda a, b: torch.linalg.solve(a.triu() + a.triu(1).T, b)),
]

# ----------------------------------------------------------------------------- signal


def _tconv(a, v, mode, nd, flip=True):
    """torch's convN (a correlation) as scipy's convolve/correlate of the full arrays."""
    conv = [None, torch.nn.functional.conv1d, torch.nn.functional.conv2d][nd]
    w = torch.flip(v, tuple(range(nd))) if flip else v
    pad = tuple(k - 1 for k in v.shape)
    full = conv(a[None, None], w[None, None], padding=pad)[0, 0]
    if mode == "full":
        return full
    if mode == "same":
        return full[tuple(slice((k - 1) // 2, (k - 1) // 2 + n) for n, k in zip(a.shape,
                                                                                v.shape))]
    return full[tuple(slice(k - 1, n) for n, k in zip(a.shape, v.shape))]


SIG = []
for _s1, _s2 in [((6,), (3,)), ((4, 5), (2, 3))]:
    for _mode in ("full", "same", "valid"):
        _v = f"{shape_id((_s1, _s2))} {_mode}"
        SIG += [
            case("scipy.signal.convolve", _v, lambda a, v, _m=_mode: fsig.convolve(a, v, _m),
                 (_s1, _s2), ("real", "real"),
                 lambda a, v, _m=_mode, _n=len(_s1): _tconv(a, v, _m, _n)),
            case("scipy.signal.correlate", _v, lambda a, v, _m=_mode: fsig.correlate(a, v, _m),
                 (_s1, _s2), ("real", "real"),
                 lambda a, v, _m=_mode, _n=len(_s1): _tconv(a, v, _m, _n, flip=False)),
        ]
SIG.append(case("scipy.signal.convolve", "(3,)x(5,) valid (swapped)",
                lambda a, v: fsig.convolve(a, v, "valid"), ((3,), (5,)), ("real", "real"),
                None))

# ----------------------------------------------------------------------------- stats

_X = (2, 3)
_TWO_SIDED = lambda r, s: r.choice([0.25, 0.75], s) + r.uniform(-0.05, 0.05, s)
_P3 = (3,)


def _td(name, **kw):
    return getattr(TD, name)(validate_args=False, **kw)


def _loc_scale(fam, method, dom, tfun, shapes=(), variant=""):
    """Cases of fam.method(x, *shapes, loc, scale) differentiated in x, loc and scale."""
    f = getattr(fst, fam)
    return case(f"stats.{fam}.{method}", f"(2,3) loc,scale (3,){variant}",
                lambda x, loc, s: getattr(f, method)(x, *shapes, loc=loc, scale=s),
                (_X, _P3, _P3), (dom, _u(-0.1, 0.1), _u(0.8, 1.3)), tfun)


def _norm(loc, s):
    return _td("Normal", loc=loc, scale=s)


def _x_std(x, loc, s):
    return (x - loc) / s


ST = [
    _loc_scale("norm", "logpdf", "real", lambda x, loc, s: _norm(loc, s).log_prob(x)),
    _loc_scale("norm", "pdf", "real", lambda x, loc, s: _norm(loc, s).log_prob(x).exp()),
    _loc_scale("norm", "cdf", "real", lambda x, loc, s: _norm(loc, s).cdf(x)),
    _loc_scale("norm", "logcdf", _u(-6, 3), lambda x, loc, s:
               torch.special.log_ndtr(_x_std(x, loc, s))),
    _loc_scale("norm", "sf", "real", lambda x, loc, s: 1 - _norm(loc, s).cdf(x)),
    _loc_scale("norm", "logsf", _u(-3, 6), lambda x, loc, s:
               torch.special.log_ndtr(-_x_std(x, loc, s))),
    _loc_scale("norm", "ppf", _u(0.15, 0.85), lambda q, loc, s: _norm(loc, s).icdf(q)),
    _loc_scale("expon", "logpdf", _u(0.3, 3), lambda x, loc, s:
               _td("Exponential", rate=1 / s).log_prob(x - loc)),
    _loc_scale("expon", "cdf", _u(0.3, 3), lambda x, loc, s:
               _td("Exponential", rate=1 / s).cdf(x - loc)),
    _loc_scale("expon", "logsf", _u(0.3, 3), lambda x, loc, s: -(x - loc) / s),
    _loc_scale("expon", "ppf", _u(0.15, 0.85), lambda q, loc, s:
               loc + _td("Exponential", rate=1 / s).icdf(q)),
    _loc_scale("laplace", "logpdf", "nonzero", lambda x, loc, s:
               _td("Laplace", loc=loc, scale=s).log_prob(x)),
    _loc_scale("laplace", "cdf", "nonzero", lambda x, loc, s:
               _td("Laplace", loc=loc, scale=s).cdf(x)),
    _loc_scale("laplace", "ppf", _TWO_SIDED, lambda q, loc, s:
               _td("Laplace", loc=loc, scale=s).icdf(q)),
    _loc_scale("logistic", "logpdf", "real", lambda x, loc, s:
               -torch.abs(_x_std(x, loc, s)) - 2 * torch.log1p(torch.exp(
                   -torch.abs(_x_std(x, loc, s)))) - torch.log(s)),
    _loc_scale("logistic", "cdf", "real", lambda x, loc, s: torch.sigmoid(_x_std(x, loc, s))),
    _loc_scale("logistic", "ppf", _u(0.15, 0.85), lambda q, loc, s: loc + s * torch.logit(q)),
    _loc_scale("uniform", "logpdf", _u(0.2, 0.6), lambda x, loc, s:
               _td("Uniform", low=loc, high=loc + s).log_prob(x)),
    _loc_scale("uniform", "cdf", _u(0.2, 0.6), lambda x, loc, s:
               _td("Uniform", low=loc, high=loc + s).cdf(x)),
    _loc_scale("cauchy", "logpdf", "real", lambda x, loc, s:
               _td("Cauchy", loc=loc, scale=s).log_prob(x)),
    _loc_scale("cauchy", "cdf", "real", lambda x, loc, s: _td("Cauchy", loc=loc, scale=s).cdf(x)),
    _loc_scale("cauchy", "ppf", _u(0.15, 0.85), lambda q, loc, s:
               _td("Cauchy", loc=loc, scale=s).icdf(q)),
    case("stats.t.logpdf", "(2,3) df,loc,scale (3,)", fst.t.logpdf, (_X, _P3, _P3, _P3),
         ("real", _u(1.5, 6), _u(-0.1, 0.1), _u(0.8, 1.3)),
         lambda x, df, loc, s: _td("StudentT", df=df, loc=loc, scale=s).log_prob(x)),
    case("stats.t.cdf", "(2,3) df=3.5 loc,scale (3,)",
         lambda x, loc, s: fst.t.cdf(x, 3.5, loc, s), (_X, _P3, _P3),
         ("real", _u(-0.1, 0.1), _u(0.8, 1.3)), None),
    case("stats.t.ppf", "(2,3) df=3.5 loc,scale (3,)",
         lambda q, loc, s: fst.t.ppf(q, 3.5, loc, s), (_X, _P3, _P3),
         (_u(0.15, 0.85), _u(-0.1, 0.1), _u(0.8, 1.3)), None),
    case("stats.gamma.ppf", "(2,3) a=2.5 loc,scale (3,)",
         lambda q, loc, s: fst.gamma.ppf(q, 2.5, loc, s), (_X, _P3, _P3),
         (_u(0.15, 0.85), _u(-0.1, 0.1), _u(0.8, 1.3)), None),
    case("stats.beta.ppf", "(2,3) a=2.5 b=1.5", lambda q: fst.beta.ppf(q, 2.5, 1.5), (_X,),
         (_u(0.15, 0.85),), None),
    case("stats.gamma.logpdf", "(2,3) a,scale (3,)", lambda x, a, s: fst.gamma.logpdf(
        x, a, scale=s), (_X, _P3, _P3), (_u(0.3, 4), _u(0.8, 4), _u(0.8, 1.3)),
         lambda x, a, s: _td("Gamma", concentration=a, rate=1 / s).log_prob(x)),
    case("stats.gamma.cdf", "(2,3) a=2.5 scale (3,)", lambda x, s: fst.gamma.cdf(
        x, 2.5, scale=s), (_X, _P3), (_u(0.3, 4), _u(0.8, 1.3)),
         lambda x, s: torch.special.gammainc(torch.full_like(x, 2.5), x / s)),
    case("stats.gamma.logsf", "(2,3) a=2.5", lambda x: fst.gamma.logsf(x, 2.5), (_X,),
         (_u(0.3, 6),), lambda x: torch.log(torch.special.gammaincc(torch.full_like(x, 2.5),
                                                                    x))),
    case("stats.chi2.logpdf", "(2,3) df (3,)", fst.chi2.logpdf, (_X, _P3),
         (_u(0.3, 4), _u(1.5, 5)), lambda x, df: _td("Chi2", df=df).log_prob(x)),
    case("stats.chi2.cdf", "(2,3) df=3", lambda x: fst.chi2.cdf(x, 3.0), (_X,), (_u(0.3, 6),),
         lambda x: torch.special.gammainc(torch.full_like(x, 1.5), x / 2)),
    case("stats.beta.logpdf", "(2,3) a,b (3,)", fst.beta.logpdf, (_X, _P3, _P3),
         (_u(0.1, 0.9), _u(0.7, 4), _u(0.7, 4)),
         lambda x, a, b: _td("Beta", concentration1=a, concentration0=b).log_prob(x)),
    case("stats.beta.cdf", "(2,3) a=2.5 b=1.5", lambda x: fst.beta.cdf(x, 2.5, 1.5), (_X,),
         (_u(0.1, 0.9),), None),
    case("stats.poisson.logpmf", "(2,3) k, mu (3,)", lambda mu: fst.poisson.logpmf(
        np.array([[0.0, 1, 2], [5, 3, 7]]), mu), (_P3,), (_u(0.5, 6),),
         lambda mu: _td("Poisson", rate=mu).log_prob(
             torch.tensor([[0.0, 1, 2], [5, 3, 7]], dtype=mu.dtype))),
    case("stats.poisson.cdf", "(2,3) k, mu (3,)", lambda mu: fst.poisson.cdf(
        np.array([[0.0, 1, 2], [5, 3, 7]]), mu), (_P3,), (_u(0.5, 6),), None),
    case("stats.bernoulli.logpmf", "(2,3) k, p (3,)", lambda p: fst.bernoulli.logpmf(
        np.array([[0.0, 1, 1], [1, 0, 0]]), p), (_P3,), (_u(0.1, 0.9),),
         lambda p: _td("Bernoulli", probs=p).log_prob(
             torch.tensor([[0.0, 1, 1], [1, 0, 0]], dtype=p.dtype))),
    case("stats.binom.logpmf", "(2,3) k, n=7, p (3,)", lambda p: fst.binom.logpmf(
        np.array([[0.0, 1, 2], [5, 3, 7]]), 7, p), (_P3,), (_u(0.1, 0.9),),
         lambda p: _td("Binomial", total_count=7, probs=p).log_prob(
             torch.tensor([[0.0, 1, 2], [5, 3, 7]], dtype=p.dtype))),
    case("stats.binom.cdf", "(2,3) k, n=7, p (3,)", lambda p: fst.binom.cdf(
        np.array([[0.0, 1, 2], [5, 3, 6]]), 7, p), (_P3,), (_u(0.1, 0.9),), None),
    case("stats.multivariate_normal.logpdf", "(4,3) mean (3,) cov (3,3)",
         lambda x, m, c: fst.multivariate_normal.logpdf(x, m, _fsym(c)), ((4, 3), _P3, (3, 3)),
         ("real", "real", spd), lambda x, m, c: TD.MultivariateNormal(
             m, covariance_matrix=_tsym(c), validate_args=False).log_prob(x)),
    case("stats.multivariate_normal.logpdf", "(2,) scalar cov",
         lambda x, m, c: fst.multivariate_normal.logpdf(x, m, c), ((2,), (2,), ()),
         ("real", "real", _u(0.5, 2)), lambda x, m, c: TD.MultivariateNormal(
             m, covariance_matrix=c * torch.eye(2, dtype=c.dtype), validate_args=False
         ).log_prob(x)),
    case("stats.multivariate_normal.entropy", "(3,3)",
         lambda c: fst.multivariate_normal.entropy(None, _fsym(c)), ((3, 3),), (spd,),
         lambda c: TD.MultivariateNormal(torch.zeros(3, dtype=c.dtype),
                                         covariance_matrix=_tsym(c)).entropy()),
    case("stats.dirichlet.logpdf", "(3,) of K-1=2 alpha (3,)", fst.dirichlet.logpdf,
         ((2,), (3,)), (_fixed(0.3, 0.45), _u(0.8, 3)),
         lambda x, a: _td("Dirichlet", concentration=a).log_prob(
             torch.cat([x, 1 - x.sum(0, keepdim=True)]))),
    # no torch parity: its gradient needs torch's trigamma, accurate to ~1e-9 only
    case("stats.dirichlet.entropy", "(4,)", fst.dirichlet.entropy, ((4,),), (_u(0.8, 3),),
         None),
]

# ----------------------------------------------------------------------------- integrate
# odeint is one custom_vjp node (adjoint method): reverse mode only. Tight tolerances make
# the solution accurate enough for five-point differences and for torch parity with the
# closed form expm(A t) y0 of a linear system.

_T = np.array([0.0, 0.4, 1.1, 1.5])
_TOL = dict(rtol=1e-12, atol=1e-12)


def _pendulum(y, t, a, b):
    return fnp.stack([a * y[1], -b * fnp.sin(y[0]) - 0.1 * y[1] + 0.2 * fnp.cos(t)])


def _linear(y, t, a):
    return a @ y


def _times(r, s):
    return np.cumsum(r.uniform(0.3, 0.6, s)) - 0.3


def _t_linear(y0, a):
    return torch.stack([torch.linalg.matrix_exp(a * float(t)) @ y0 for t in _T])


INTEGRATE = [
    case("scipy.integrate.odeint", "pendulum (2,) in y0, a, b",
         lambda y0, a, b: fint.odeint(_pendulum, y0, _T, a, b, **_TOL), ((2,), (), ()),
         ("real", _u(0.5, 1.5), _u(0.5, 1.5)), None, modes=("rev",)),
    case("scipy.integrate.odeint", "pendulum (2,) in t (4,)",
         lambda y0, t: fint.odeint(_pendulum, y0, t, 1.0, 0.8, **_TOL), ((2,), (4,)),
         ("real", _times), None, modes=("rev",)),
    case("scipy.integrate.odeint", "linear (3,) y' = A y vs expm",
         lambda y0, a: fint.odeint(_linear, y0, _T, a, **_TOL), ((3,), (3, 3)),
         ("real", lambda r, s: 0.5 * r.standard_normal(s)), _t_linear, modes=("rev",)),
]

CASES = SP + LA + SIG + ST + INTEGRATE
