"""JAX's `jax.lax`: structured control flow (scan, cond, while_loop, fori_loop, map, switch,
associative_scan) and lax's elementwise, structural, reduction and convolution operations
(docs/lax.md).

The loops and conditionals trace their function(s) once on shapes and dtypes into a
program held by one primitive, so under jit a loop body is staged once, not unrolled, and
grad/jvp/jit see a single differentiable operation. The operations are built from
fnad.numpy's primitives, so every transform's rules hold for them.
"""

from ._control import cond as cond
from ._control import fori_loop as fori_loop
from ._control import scan as scan
from ._control import while_loop as while_loop

# --- issue 33: lax's operations (elementwise, structural, reductions, convolutions, flow)
from ._elementwise import (
    add as add,
    sub as sub,
    mul as mul,
    div as div,
    rem as rem,
    max as max,
    min as min,
    neg as neg,
    exp as exp,
    exp2 as exp2,
    log as log,
    log1p as log1p,
    expm1 as expm1,
    tanh as tanh,
    logistic as logistic,
    rsqrt as rsqrt,
    sqrt as sqrt,
    cbrt as cbrt,
    square as square,
    integer_pow as integer_pow,
    pow as pow,
    abs as abs,
    sign as sign,
    sin as sin,
    cos as cos,
    tan as tan,
    atan2 as atan2,
    floor as floor,
    ceil as ceil,
    round as round,
    is_finite as is_finite,
    eq as eq,
    ne as ne,
    lt as lt,
    le as le,
    gt as gt,
    ge as ge,
    select as select,
    select_n as select_n,
    clamp as clamp,
    convert_element_type as convert_element_type,
    stop_gradient as stop_gradient,
    Precision as Precision,
    full as full,
    full_like as full_like,
    iota as iota,
    broadcasted_iota as broadcasted_iota,
    sinh as sinh,
    cosh as cosh,
    asin as asin,
    acos as acos,
    atan as atan,
    asinh as asinh,
    acosh as acosh,
    atanh as atanh,
    reciprocal as reciprocal,
    nextafter as nextafter,
    real as real,
    imag as imag,
    conj as conj,
    complex as complex,
    bitwise_and as bitwise_and,
    bitwise_or as bitwise_or,
    bitwise_xor as bitwise_xor,
    bitwise_not as bitwise_not,
    shift_left as shift_left,
    shift_right_arithmetic as shift_right_arithmetic,
    shift_right_logical as shift_right_logical,
    RoundingMethod as RoundingMethod,
    optimization_barrier as optimization_barrier,
)
from ._structural import (
    slice as slice,
    slice_in_dim as slice_in_dim,
    index_in_dim as index_in_dim,
    dynamic_slice as dynamic_slice,
    dynamic_slice_in_dim as dynamic_slice_in_dim,
    dynamic_index_in_dim as dynamic_index_in_dim,
    dynamic_update_slice as dynamic_update_slice,
    dynamic_update_slice_in_dim as dynamic_update_slice_in_dim,
    dynamic_update_index_in_dim as dynamic_update_index_in_dim,
    pad as pad,
    concatenate as concatenate,
    broadcast as broadcast,
    broadcast_in_dim as broadcast_in_dim,
    reshape as reshape,
    squeeze as squeeze,
    expand_dims as expand_dims,
    transpose as transpose,
    rev as rev,
    collapse as collapse,
    broadcast_to_rank as broadcast_to_rank,
    broadcast_shapes as broadcast_shapes,
    split as split,
)
from ._sort import (
    sort as sort,
    sort_key_val as sort_key_val,
    top_k as top_k,
    approx_max_k as approx_max_k,
    approx_min_k as approx_min_k,
    cumsum as cumsum,
    cumprod as cumprod,
    cummax as cummax,
    cummin as cummin,
    cumlogsumexp as cumlogsumexp,
)
from ._reduce import (
    reduce as reduce,
    reduce_sum as reduce_sum,
    reduce_prod as reduce_prod,
    reduce_max as reduce_max,
    reduce_min as reduce_min,
    reduce_and as reduce_and,
    reduce_or as reduce_or,
    reduce_xor as reduce_xor,
    argmax as argmax,
    argmin as argmin,
    reduce_window as reduce_window,
    reduce_window_shape_tuple as reduce_window_shape_tuple,
    padtype_to_pads as padtype_to_pads,
    dot_general as dot_general,
    dot as dot,
    batch_matmul as batch_matmul,
)
from ._conv import (
    ConvDimensionNumbers as ConvDimensionNumbers,
    conv_dimension_numbers as conv_dimension_numbers,
    conv_general_permutations as conv_general_permutations,
    conv_general_dilated as conv_general_dilated,
    conv as conv,
    conv_with_general_padding as conv_with_general_padding,
    conv_transpose as conv_transpose,
    conv_shape_tuple as conv_shape_tuple,
    conv_general_shape_tuple as conv_general_shape_tuple,
    conv_transpose_shape_tuple as conv_transpose_shape_tuple,
)
from ._flow import (
    map as map,
    switch as switch,
    associative_scan as associative_scan,
)
# --- end of issue 33's lax operations
# Collectives over a named vmap axis (vmap(f, axis_name="i")): fnad/lax/_collectives.py
from ._collectives import all_gather as all_gather
from ._collectives import axis_index as axis_index
from ._collectives import pmax as pmax
from ._collectives import pmean as pmean
from ._collectives import pmin as pmin
from ._collectives import psum as psum
