"""fnad.numpy: NumPy's API, differentiable under fnad's transforms.

On plain NumPy/CuPy arrays every function runs the backend directly; under a transform
the same calls are traced. Names are re-exported explicitly from the category modules.
"""

import numpy as _np

from ._creation import (
    zeros as zeros,
    ones as ones,
    full as full,
    empty as empty,
    eye as eye,
    identity as identity,
    arange as arange,
    tri as tri,
    meshgrid as meshgrid,
    indices as indices,
    zeros_like as zeros_like,
    ones_like as ones_like,
    empty_like as empty_like,
    full_like as full_like,
    tril as tril,
    triu as triu,
    asarray as asarray,
    array as array,
    copy as copy,
)
from ._spaces import (
    linspace as linspace,
    logspace as logspace,
    geomspace as geomspace,
)
from ._elementwise import (
    add as add,
    subtract as subtract,
    multiply as multiply,
    divide as divide,
    true_divide as true_divide,
    negative as negative,
    positive as positive,
    power as power,
    square as square,
    sqrt as sqrt,
    cbrt as cbrt,
    absolute as absolute,
    abs as abs,
    fabs as fabs,
    exp as exp,
    exp2 as exp2,
    expm1 as expm1,
    log as log,
    log2 as log2,
    log10 as log10,
    log1p as log1p,
    sin as sin,
    cos as cos,
    tan as tan,
    arcsin as arcsin,
    arccos as arccos,
    arctan as arctan,
    arctan2 as arctan2,
    sinh as sinh,
    cosh as cosh,
    tanh as tanh,
    arcsinh as arcsinh,
    arccosh as arccosh,
    arctanh as arctanh,
    reciprocal as reciprocal,
    hypot as hypot,
    logaddexp as logaddexp,
    logaddexp2 as logaddexp2,
    maximum as maximum,
    minimum as minimum,
    fmax as fmax,
    fmin as fmin,
    deg2rad as deg2rad,
    rad2deg as rad2deg,
    radians as radians,
    degrees as degrees,
    sinc as sinc,
    mod as mod,
    remainder as remainder,
    fmod as fmod,
    real as real,
    imag as imag,
    conj as conj,
    conjugate as conjugate,
    angle as angle,
    iscomplexobj as iscomplexobj,
    isrealobj as isrealobj,
    real_if_close as real_if_close,
    copysign as copysign,
    round as round,
    around as around,
    clip as clip,
    where as where,
    floor as floor,
    ceil as ceil,
    rint as rint,
    trunc as trunc,
    fix as fix,
    sign as sign,
    signbit as signbit,
    floor_divide as floor_divide,
    equal as equal,
    not_equal as not_equal,
    less as less,
    less_equal as less_equal,
    greater as greater,
    greater_equal as greater_equal,
    logical_and as logical_and,
    logical_or as logical_or,
    logical_not as logical_not,
    logical_xor as logical_xor,
    isfinite as isfinite,
    isinf as isinf,
    isnan as isnan,
    isclose as isclose,
    allclose as allclose,
    array_equal as array_equal,
    bitwise_and as bitwise_and,
    bitwise_or as bitwise_or,
    bitwise_xor as bitwise_xor,
    invert as invert,
    left_shift as left_shift,
    right_shift as right_shift,
    heaviside as heaviside,
    gcd as gcd,
    lcm as lcm,
    iscomplex as iscomplex,
    isreal as isreal,
    isneginf as isneginf,
    isposinf as isposinf,
    nextafter as nextafter,
    spacing as spacing,
    acos as acos,
    asin as asin,
    atan as atan,
    atan2 as atan2,
    acosh as acosh,
    asinh as asinh,
    atanh as atanh,
    pow as pow,
    bitwise_not as bitwise_not,
    bitwise_invert as bitwise_invert,
)
from ._masked import nan_to_num as nan_to_num, select as select
from ._reductions import (
    sum as sum,
    mean as mean,
    amax as amax,
    amin as amin,
    max as max,
    min as min,
    prod as prod,
    cumsum as cumsum,
    cumprod as cumprod,
    cumulative_sum as cumulative_sum,
    cumulative_prod as cumulative_prod,
    any as any,
    all as all,
    count_nonzero as count_nonzero,
)
from ._logsumexp import logsumexp as logsumexp
from ._stats import (
    var as var,
    std as std,
    average as average,
    ptp as ptp,
    nansum as nansum,
    nanmean as nanmean,
    nanmax as nanmax,
    nanmin as nanmin,
    nanvar as nanvar,
    nanstd as nanstd,
    median as median,
)
from ._shape import (
    broadcast_to as broadcast_to,
    reshape as reshape,
    transpose as transpose,
    astype as astype,
    concatenate as concatenate,
    ravel as ravel,
    swapaxes as swapaxes,
    expand_dims as expand_dims,
    squeeze as squeeze,
    stack as stack,
    moveaxis as moveaxis,
    rollaxis as rollaxis,
    permute_dims as permute_dims,
    matrix_transpose as matrix_transpose,
    concat as concat,
    broadcast_shapes as broadcast_shapes,
    broadcast_arrays as broadcast_arrays,
)
from ._joining import (
    atleast_1d as atleast_1d,
    atleast_2d as atleast_2d,
    atleast_3d as atleast_3d,
    hstack as hstack,
    vstack as vstack,
    row_stack as row_stack,
    dstack as dstack,
    column_stack as column_stack,
    split as split,
    array_split as array_split,
    hsplit as hsplit,
    vsplit as vsplit,
    dsplit as dsplit,
    unstack as unstack,
    append as append,
)
from ._rearrange import (
    flip as flip,
    fliplr as fliplr,
    flipud as flipud,
    rot90 as rot90,
    roll as roll,
    tile as tile,
    repeat as repeat,
    pad as pad,
    diff as diff,
    trapezoid as trapezoid,
)
from ._diag import (
    diagonal as diagonal,
    diag as diag,
    diagflat as diagflat,
    trace as trace,
)
from ._products import (
    matmul as matmul,
    dot as dot,
    tensordot as tensordot,
    inner as inner,
    outer as outer,
    kron as kron,
    cross as cross,
    vdot as vdot,
    vecdot as vecdot,
    matvec as matvec,
    vecmat as vecmat,
    convolve as convolve,
    correlate as correlate,
)
from ._einsum import einsum as einsum
from ._indexing import (
    getitem as getitem,
    index_add as index_add,
    index_set as index_set,
    index_mul as index_mul,
    at as at,
    take as take,
    take_along_axis as take_along_axis,
    argsort as argsort,
    argmax as argmax,
    argmin as argmin,
    nonzero as nonzero,
    argwhere as argwhere,
    flatnonzero as flatnonzero,
    searchsorted as searchsorted,
    sort as sort,
    partition as partition,
    argpartition as argpartition,
)

# Constants, dtypes and dtype helpers are NumPy's own.
ndarray = _np.ndarray
pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, _np.newaxis
euler_gamma = _np.euler_gamma
float16, float32, float64 = _np.float16, _np.float32, _np.float64
longdouble, clongdouble = _np.longdouble, _np.clongdouble
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint16, uint32, uint64 = _np.uint8, _np.uint16, _np.uint32, _np.uint64
bool_, complex64, complex128, intp = _np.bool_, _np.complex64, _np.complex128, _np.intp
dtype, finfo, iinfo, result_type, promote_types = (_np.dtype, _np.finfo, _np.iinfo,
                                                   _np.result_type, _np.promote_types)
issubdtype, can_cast, floating, integer, number = (_np.issubdtype, _np.can_cast, _np.floating,
                                                   _np.integer, _np.number)
inexact, signedinteger, unsignedinteger = _np.inexact, _np.signedinteger, _np.unsignedinteger
from ._util import shape as shape, ndim as ndim  # noqa: E402


def size(a, axis=None):
    """Number of elements of `a` (along `axis` if given)."""
    s = shape(a)
    return int(_np.prod(s)) if axis is None else s[axis]


from ._index_tricks import c_ as c_, r_ as r_  # noqa: E402
from ._gradient import gradient as gradient  # noqa: E402
from . import linalg as linalg  # noqa: E402
from . import fft as fft  # noqa: E402
