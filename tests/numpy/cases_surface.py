"""Op table, NumPy surface (format: tests/numpy/cases.py): r_, c_, gradient, median, the
value modes of pad, einsum's sublist form, where=/initial= in reductions, joining one array,
lists of traced arrays as inputs, nan_to_num, select, linspace/logspace/geomspace in their
endpoints, and x ** 0 at 0."""

import numpy as np

import fnad.numpy as fnp
from tests.numpy.casekit import OpCase, make_args, torch


def case(name, variant, fun, shapes, tfun=None, domains=None, order=2, **kw):
    domains = domains or ("real",) * len(shapes)
    return OpCase(name, variant, fun, make_args(name, variant, domains, shapes), tfun, order,
                  **kw)


def _coords(r, s):
    """Strictly increasing, unevenly spaced coordinates."""
    return np.cumsum(r.uniform(0.5, 1.5, s), axis=-1)


MASK = np.array([[True, False, True], [True, True, False]])
TMASK = torch.from_numpy(MASK) if torch else None
X0 = np.array([[0.0, 0.5, 1.0], [1.5, 0.0, 2.0]])  # x ** 0 at zeros among other points

SURFACE = [
    # ------------------------------------------------------------------ r_, c_
    case("r_", "(3,),(),slice,linspace", lambda a, c: fnp.r_[a, 0, 1:4, c, -1:1:5j],
         ((3,), ()), lambda a, c: torch.cat([a, torch.zeros(1, dtype=a.dtype),
                                             torch.arange(1, 4, dtype=a.dtype), c[None],
                                             torch.linspace(-1, 1, 5, dtype=a.dtype)])),
    case("r_", "'-1' (2,3),(2,3)", lambda a, b: fnp.r_["-1", a, b], ((2, 3), (2, 3)),
         lambda a, b: torch.cat([a, b], -1)),
    case("r_", "'0,2,0' (3,),(3,)", lambda a, b: fnp.r_["0,2,0", a, b], ((3,), (3,)),
         lambda a, b: torch.cat([a[:, None], b[:, None]], 0)),
    case("c_", "(3,),(3,)", lambda a, b: fnp.c_[a, b], ((3,), (3,)),
         lambda a, b: torch.stack([a, b], -1)),
    case("c_", "(3,2),(3,),slice", lambda a, b: fnp.c_[a, b, 0:3], ((3, 2), (3,)),
         lambda a, b: torch.cat([a, b[:, None], torch.arange(3, dtype=a.dtype)[:, None]], 1)),
    # ------------------------------------------------------------------ gradient
    case("gradient", "(5,)", fnp.gradient, ((5,),), lambda t: torch.gradient(t)[0]),
    case("gradient", "(4,5) h=0.5", lambda f: fnp.gradient(f, 0.5), ((4, 5),),
         lambda t: torch.gradient(t, spacing=0.5)),
    case("gradient", "(4,5) h=2 edge_order=2", lambda f: fnp.gradient(f, 2.0, edge_order=2),
         ((4, 5),), lambda t: torch.gradient(t, spacing=2.0, edge_order=2)),
    case("gradient", "(4,5) axis=-1 edge_order=2",
         lambda f: fnp.gradient(f, axis=-1, edge_order=2), ((4, 5),),
         lambda t: torch.gradient(t, dim=-1, edge_order=2)[0]),
    case("gradient", "(4,5),(4,),(5,) coordinates", fnp.gradient, ((4, 5), (4,), (5,)),
         None, ("real", _coords, _coords)),
    case("gradient", "(4,5),(4,),(5,) coordinates edge_order=2",
         lambda f, x, y: fnp.gradient(f, x, y, edge_order=2), ((4, 5), (4,), (5,)), None,
         ("real", _coords, _coords)),
    case("gradient", "(3,4,5) axis=(2,0)", lambda f: fnp.gradient(f, axis=(2, 0)),
         ((3, 4, 5),), lambda t: torch.gradient(t, dim=(2, 0))),
    # ------------------------------------------------------------------ median
    case("median", "(5,)", fnp.median, ((5,),)),
    case("median", "(2,4) axis=1", lambda x: fnp.median(x, axis=1), ((2, 4),)),
    case("median", "(3,2,4) axis=(0,2) keepdims",
         lambda x: fnp.median(x, axis=(0, 2), keepdims=True), ((3, 2, 4),)),
    case("median", "list [x, y] axis=0", lambda x, y: fnp.median([x, y, x * y], axis=0),
         ((2, 3), (2, 3))),
    # ------------------------------------------------------------------ einsum sublists
    case("einsum", "sublists [0,1],[1,2]->[0,2]",
         lambda a, b: fnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), ((2, 3), (3, 4)),
         lambda a, b: torch.einsum(a, [0, 1], b, [1, 2], [0, 2])),
    case("einsum", "sublists [...,1],[1,2] implicit",
         lambda a, b: fnp.einsum(a, [Ellipsis, 1], b, [1, 2]), ((2, 2, 3), (3, 4)),
         lambda a, b: torch.einsum("...b,bc->...c", a, b)),
    case("einsum", "sublists [0,0,1]->[1] diagonal", lambda a: fnp.einsum(a, [0, 0, 1], [1]),
         ((3, 3, 2),), lambda a: torch.einsum("aab->b", a)),
    # ------------------------------------------------------------------ where= and initial=
    case("sum", "(2,3) where", lambda x: fnp.sum(x, where=MASK), ((2, 3),),
         lambda t: torch.sum(t * TMASK)),
    case("sum", "(2,3) axis=1 where initial=2", lambda x: fnp.sum(x, 1, where=MASK, initial=2.),
         ((2, 3),), lambda t: torch.sum(t * TMASK, 1) + 2),
    case("mean", "(2,3) where", lambda x: fnp.mean(x, where=MASK), ((2, 3),),
         lambda t: torch.sum(t * TMASK) / TMASK.sum()),
    case("mean", "(2,3) axis=0 where keepdims",
         lambda x: fnp.mean(x, axis=0, where=MASK, keepdims=True), ((2, 3),),
         lambda t: torch.sum(t * TMASK, 0, keepdim=True) / TMASK.sum(0, keepdim=True)),
    case("max", "(2,3) axis=1 where initial=-5",
         lambda x: fnp.max(x, axis=1, where=MASK, initial=-5.0), ((2, 3),),
         lambda t: torch.amax(torch.where(TMASK, t, -5.0), 1)),
    case("min", "(2,3) where initial=5", lambda x: fnp.min(x, where=MASK, initial=5.0),
         ((2, 3),), lambda t: torch.amin(torch.where(TMASK, t, 5.0))),
    case("amax", "(2,3) axis=0 initial=0.3 (beats some columns)",
         lambda x: fnp.amax(x, axis=0, initial=0.3), ((2, 3),),
         lambda t: torch.clamp_min(torch.amax(t, 0), 0.3)),
    case("amin", "(2,3) axis=1 where initial=5 keepdims",
         lambda x: fnp.amin(x, axis=1, where=MASK, initial=5.0, keepdims=True), ((2, 3),),
         lambda t: torch.amin(torch.where(TMASK, t, 5.0), 1, keepdim=True)),
    case("prod", "(2,3) axis=1 where initial=2",
         lambda x: fnp.prod(x, axis=1, where=MASK, initial=2.0), ((2, 3),),
         lambda t: 2 * torch.prod(torch.where(TMASK, t, 1.0), 1)),
    case("nansum", "(2,3) axis=0 where initial=1",
         lambda x: fnp.nansum(x, axis=0, where=MASK, initial=1.0), ((2, 3),),
         lambda t: torch.sum(t * TMASK, 0) + 1),
    case("var", "(2,3) axis=1 where ddof=1", lambda x: fnp.var(x, axis=1, where=MASK, ddof=1),
         ((2, 3),)),
    case("std", "(2,3) where", lambda x: fnp.std(x, where=MASK), ((2, 3),),
         lambda t: torch.std(t[TMASK], correction=0)),
    # ------------------------------------------------------------------ joining one array
    case("vstack", "one (3,)", fnp.vstack, ((3,),), lambda t: t[:, None]),
    case("vstack", "one (2,3,4)", fnp.vstack, ((2, 3, 4),), lambda t: torch.vstack(t.unbind(0))),
    case("hstack", "one (2,3)", fnp.hstack, ((2, 3),), lambda t: torch.hstack(t.unbind(0))),
    case("dstack", "one (2,3)", fnp.dstack, ((2, 3),), lambda t: torch.dstack(t.unbind(0))),
    case("column_stack", "one (2,3)", fnp.column_stack, ((2, 3),),
         lambda t: torch.column_stack(t.unbind(0))),
    # ------------------------------------------------------------------ lists of traced arrays
    case("mean", "list [x, x + 2]", lambda x: fnp.mean([x, x + 2]), ((2, 3),),
         lambda t: torch.mean(torch.stack([t, t + 2]))),
    case("max", "list [x, y] axis=0", lambda x, y: fnp.max([x, y], axis=0),
         ((2, 3), (2, 3)), lambda x, y: torch.amax(torch.stack([x, y]), 0)),
    case("linalg.norm", "list [x, y] of scalars", lambda x, y: fnp.linalg.norm([x, y]),
         ((), ()), lambda x, y: torch.linalg.vector_norm(torch.stack([x, y]))),
    case("linalg.norm", "list [x, y] of (3,)", lambda x, y: fnp.linalg.norm([x, y]),
         ((3,), (3,)), lambda x, y: torch.linalg.matrix_norm(torch.stack([x, y]))),
    case("cumsum", "list [x, y] axis=0", lambda x, y: fnp.cumsum([x, y], axis=0),
         ((3,), (3,)), lambda x, y: torch.cumsum(torch.stack([x, y]), 0)),
    case("append", "list [x, 2, y] and y", lambda x, y: fnp.append([x, 2.0, y], y),
         ((), ()), lambda x, y: torch.stack([x, torch.tensor(2.0, dtype=x.dtype), y, y])),
    case("ravel", "list [[x, y], [y, 1]]", lambda x, y: fnp.ravel([[x, y], [y, 1.0]]),
         ((), ()), lambda x, y: torch.stack([x, y, y, torch.tensor(1.0, dtype=x.dtype)])),
    case("concatenate", "lists [[x, 2]], [y]", lambda x, y: fnp.concatenate([[x, 2.0], [y]]),
         ((), ()), lambda x, y: torch.stack([x, torch.tensor(2.0, dtype=x.dtype), y])),
    case("transpose", "list of (3,) rows", lambda x, y: fnp.transpose([x, y]),
         ((3,), (3,)), lambda x, y: torch.stack([x, y]).T),
    # ------------------------------------------------------------------ issue 21's names
    # (finite replacements: the default ones, +-1.8e308, overflow the differences)
    case("nan_to_num", "(4,) with nan, inf, -inf",
         lambda x: fnp.nan_to_num(x + np.array([0.0, np.nan, np.inf, -np.inf]), nan=0.5,
                                  posinf=5.0, neginf=-5.0), ((4,),),
         lambda t: torch.nan_to_num(t + torch.tensor([0.0, np.nan, np.inf, -np.inf],
                                                     dtype=t.dtype), 0.5, 5.0, -5.0)),
    case("nan_to_num", "(2,3) finite", fnp.nan_to_num, ((2, 3),),
         lambda t: torch.nan_to_num(t)),
    case("select", "(2,3) two conditions, default", lambda x, y, d: fnp.select(
        [MASK, ~MASK[::-1]], [x, y * y], d), ((2, 3), (2, 3), (2, 3)),
         lambda x, y, d: torch.where(TMASK, x, torch.where(~TMASK.flip(0), y * y, d))),
    case("select", "(3,) broadcast (2,3), scalar default", lambda x, y: fnp.select(
        [MASK, MASK[::-1]], [x, y], 1.5), ((3,), (2, 3)),
         lambda x, y: torch.where(TMASK, x.expand(2, 3), torch.where(
             TMASK.flip(0), y, torch.tensor(1.5, dtype=y.dtype)))),
    case("linspace", "(),() num=5", lambda a, b: fnp.linspace(a, b, 5), ((), ()),
         lambda a, b: torch.cat([a + (b - a) * torch.arange(4, dtype=a.dtype) / 4, b[None]])),
    case("linspace", "(2,),(3,1) num=4 endpoint=False axis=-1",
         lambda a, b: fnp.linspace(a, b, 4, endpoint=False, axis=-1), ((2,), (3, 1)),
         lambda a, b: a[..., None] + (b - a)[..., None] * torch.arange(4, dtype=a.dtype) / 4),
    case("logspace", "(),() num=4 base 2", lambda a, b: fnp.logspace(a, b, 4, base=2.0),
         ((), ()), lambda a, b: 2.0 ** torch.cat(
             [a + (b - a) * torch.arange(3, dtype=a.dtype) / 3, b[None]])),
    case("logspace", "(2,),() traced base", lambda a, c: fnp.logspace(a, 1.0, 3, base=c),
         ((2,), ()), lambda a, c: c ** torch.stack([a, (a + 1) / 2, torch.ones_like(a)]),
         domains=("real", "pos")),
    case("geomspace", "(),() num=4", lambda a, b: fnp.geomspace(a, b, 4), ((), ()),
         lambda a, b: torch.cat([a[None], a * (b / a) ** (torch.arange(1, 3, dtype=a.dtype)
                                                         / 3), b[None]]),
         domains=("pos", "pos")),
    case("geomspace", "(2,) negative, endpoint=False",
         lambda a: fnp.geomspace(-a, -3.0 * a, 3, endpoint=False), ((2,),),
         lambda a: -torch.stack([a * 3.0 ** (k / 3) for k in range(3)]), domains=("pos",)),
    # ------------------------------------------------------------------ x ** 0 at 0
    OpCase("power", "x ** 0 at zeros", lambda x: x ** 0, (X0,), lambda t: t ** 0),
    OpCase("power", "power(x, 0.0) at zeros", lambda x: fnp.power(x, 0.0), (X0,),
           lambda t: torch.pow(t, 0.0)),
]

# ------------------------------------------------------------------ pad's value modes
# (no torch counterpart but 'reflect'-like ones; values against NumPy in test_surface.py)
for _mode, _kw in [("linear_ramp", {}), ("linear_ramp", {"end_values": ((1.0, 2.0), (-1, 0.5))}),
                   ("maximum", {}), ("minimum", {"stat_length": 2}),
                   ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
                   ("median", {"stat_length": 3}), ("empty", {})]:
    for _pw in [2, ((1, 2), (0, 3))]:
        SURFACE.append(case(
            "pad", f"(3,4) {_mode} {_kw} pad_width={_pw}",
            lambda x, _m=_mode, _k=_kw, _p=_pw: fnp.pad(x, _p, mode=_m, **_k), ((3, 4),)))
