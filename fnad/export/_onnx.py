"""ONNX export: the program `fnad.jit` stages for a function, written as an ONNX graph.

The function is traced at its example arguments' shapes and dtypes (as `fnad.make_graph`
does); each equation becomes a few ONNX nodes by its primitive's name (the table `_RULES`
below), arrays the function closes over become initializers, and a primitive without a
rule stops the export with an error that names it. Shapes are those of the example
arguments (static); the opset is 18. Needs the `onnx` package (the interop extra).
"""

import os
from types import SimpleNamespace

import numpy as np

from .._graph.ir import Var
from .._jit.staging import make_graph

__all__ = ["onnx", "ONNX_PRIMITIVES"]

OPSET = 18


class _Builder:
    """The ONNX nodes and initializers of one export, and the names of the Vars."""

    def __init__(self, onnx):
        self.onnx, self.h = onnx, onnx.helper
        self.nodes, self.inits, self.env, self.n = [], [], {}, 0

    def fresh(self, base="t"):
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, value, dtype=None):
        a = np.asarray(value, dtype=dtype)
        name = self.fresh("c")
        self.inits.append(self.onnx.numpy_helper.from_array(np.ascontiguousarray(a), name))
        return name

    def ints(self, values):
        return self.const(np.asarray(values, np.int64))

    def atom(self, a, dtype=None):
        """The ONNX name of an argument: a Var, an array constant or a Python scalar (made
        `dtype`, the dtype NumPy's weak scalars take, when given)."""
        if type(a) is Var:
            return self.env[a]
        return self.const(a, dtype if np.ndim(a) == 0 and not hasattr(a, "dtype") else None)

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(self.h.make_node(op, list(inputs), outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def cast(self, name, src, dst):
        if np.dtype(src) == np.dtype(dst):
            return name
        return self.node("Cast", [name], to=self.h.np_dtype_to_tensor_dtype(np.dtype(dst)))


# ----------------------------------------------------------------------------- rules
# Each rule: (builder, eqn) -> ONNX output name (or names).

def _dtype(a):
    return a.aval.dtype if type(a) is Var else np.result_type(a)


def _operands(b, e, dtype):
    """The eqn's array arguments as ONNX names of `dtype` (scalars made, Vars cast)."""
    return [b.cast(b.atom(a, dtype), _dtype(a), dtype) if type(a) is Var
            else b.atom(np.asarray(a).astype(dtype) if hasattr(a, "dtype") else a, dtype)
            for a in e.args]


def _no_options(e):
    if e.kwargs:
        raise _refuse(e, f"the options {sorted(e.kwargs)}")


def _elementwise(op):
    def rule(b, e):
        _no_options(e)
        return b.node(op, _operands(b, e, e.outvars[0].aval.dtype))
    return rule


def _compare(op, negate=False):
    def rule(b, e):
        _no_options(e)
        dt = np.result_type(*[_dtype(a) for a in e.args if type(a) is Var])
        out = b.node(op, _operands(b, e, dt))
        return b.node("Not", [out]) if negate else out
    return rule


def _invert(b, e):
    if e.outvars[0].aval.dtype != np.bool_:
        return b.node("BitwiseNot", [b.atom(e.args[0])])
    return b.node("Not", [b.atom(e.args[0])])


def _square(b, e):
    x = b.atom(e.args[0])
    return b.node("Mul", [x, x])


def _exp2(b, e):
    dt = e.outvars[0].aval.dtype
    return b.node("Pow", [b.const(2, dt), b.atom(e.args[0])])


def _gelu(b, e):  # the exact form: 0.5 x (1 + erf(x / sqrt 2))
    dt = e.outvars[0].aval.dtype
    x = b.atom(e.args[0])
    erf = b.node("Erf", [b.node("Mul", [x, b.const(1 / np.sqrt(2), dt)])])
    return b.node("Mul", [b.node("Mul", [x, b.const(0.5, dt)]),
                          b.node("Add", [erf, b.const(1, dt)])])


def _clip(b, e):
    dt = e.outvars[0].aval.dtype
    if len(e.args) != 3 or e.kwargs:
        raise _refuse(e, "bounds given by keyword")
    x, lo, hi = e.args
    ins = [b.atom(x)] + ["" if v is None else b.atom(v, dt) for v in (lo, hi)]
    return b.node("Clip", ins)


def _where(b, e):
    dt = e.outvars[0].aval.dtype
    c, x, y = e.args
    return b.node("Where", [b.atom(c)] + [b.cast(b.atom(v, dt), _dtype(v), dt) for v in (x, y)])


def _axes(e, ndim):
    axis = e.kwargs.get("axis", e.args[1] if len(e.args) > 1 else None)
    if axis is None:
        return None
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return [a % ndim for a in axis]


def _reduce(op):
    def rule(b, e):
        x = e.args[0]
        extra = sorted(set(e.kwargs) - {"axis", "keepdims"})
        if extra or len(e.args) > 2:
            raise _refuse(e, f"the arguments {extra or e.args[2:]} (only axis and keepdims)")
        axes = _axes(e, len(x.aval.shape))
        keep = int(bool(e.kwargs.get("keepdims", False)))
        ins = [b.atom(x)] + ([] if axes is None else [b.ints(axes)])
        out = b.node(op, ins, keepdims=keep)
        return b.node("Reshape", [out, b.ints(e.outvars[0].aval.shape)])  # 0-d results
    return rule


def _reshape(b, e):  # to the output's static shape (squeeze, expand_dims, ravel stage it)
    shape = e.outvars[0].aval.shape
    order = e.args[2] if len(e.args) > 2 else e.kwargs.get("order", "C")
    if order not in ("C", "A", None):
        raise _refuse(e, f"order={order!r} (only C order is exported)")
    return b.node("Reshape", [b.atom(e.args[0]), b.ints(shape)])


def _transpose(b, e):
    x = e.args[0]
    axes = e.args[1] if len(e.args) > 1 else e.kwargs.get("axes")
    n = len(x.aval.shape)
    perm = list(range(n))[::-1] if axes is None else [a % n for a in axes]
    return b.node("Transpose", [b.atom(x)], perm=perm)


def _identity(b, e):
    return b.node("Identity", [b.atom(e.args[0])])


def _astype(b, e):
    return b.cast(b.atom(e.args[0]), _dtype(e.args[0]), e.outvars[0].aval.dtype)


def _broadcast_to(b, e):
    return b.node("Expand", [b.atom(e.args[0]), b.ints(e.outvars[0].aval.shape)])


def _full_like(value):
    def rule(b, e):
        aval = e.outvars[0].aval
        return b.node("Identity", [b.const(np.full(aval.shape, value, aval.dtype))])
    return rule


def _softmax(op):
    def rule(b, e):
        axis = e.args[1] if len(e.args) > 1 else e.kwargs.get("axis", -1)
        return b.node(op, [b.atom(e.args[0])], axis=axis)
    return rule


def _concatenate(b, e):
    arrays = [a for a in e.args if type(a) is Var or hasattr(a, "shape")]
    axis = e.kwargs.get("axis", 0)
    dt = e.outvars[0].aval.dtype
    return b.node("Concat", [b.cast(b.atom(a), _dtype(a), dt) for a in arrays], axis=axis)


def _matmul(b, e):
    dt = e.outvars[0].aval.dtype
    return b.node("MatMul", _operands(b, e, dt))


def _affine(b, e):  # x @ w + b (fnad_nn's fused linear layer)
    x, w, bias = e.args
    y = b.node("MatMul", [b.atom(x), b.atom(w)])
    return y if bias is None else b.node("Add", [y, b.atom(bias)])


def _scale_shift(b, e):  # x * scale + bias (the affine part of fnad_nn's norms)
    x, scale, bias = e.args
    y = b.node("Mul", [b.atom(x), b.atom(scale)])
    return y if bias is None else b.node("Add", [y, b.atom(bias)])


def _normalize(b, e):  # (x - mean) / sqrt(var + eps) over the last axis
    x, eps = e.args[0], e.args[1] if len(e.args) > 1 else e.kwargs.get("eps", 1e-5)
    dt = e.outvars[0].aval.dtype
    last = b.ints([-1])
    xc = b.node("Sub", [b.atom(x), b.node("ReduceMean", [b.atom(x), last], keepdims=1)])
    var = b.node("ReduceMean", [b.node("Mul", [xc, xc]), last], keepdims=1)
    return b.node("Div", [xc, b.node("Sqrt", [b.node("Add", [var, b.const(eps, dt)])])])


def _attention_softmax(b, e):  # softmax(s * scale) over the last axis, masked where drop
    s, drop, scale = e.args
    dt = e.outvars[0].aval.dtype
    p = b.node("Mul", [b.atom(s), b.const(scale, dt)])
    if drop is not None:
        p = b.node("Where", [b.atom(drop), b.const(-np.inf, dt), p])
    return b.node("Softmax", [p], axis=-1)


def _getitem(b, e):
    x, idx = e.args
    idx = idx if isinstance(idx, tuple) else (idx,)
    if len(idx) == 1 and type(idx[0]) is Var:  # an embedding lookup: x[ids]
        if idx[0].aval.dtype.kind not in "iu":
            raise _refuse(e, "a boolean mask index")
        return b.node("Gather", [b.atom(x), b.atom(idx[0])], axis=0)
    if any(type(i) is Var or hasattr(i, "shape") or isinstance(i, list) for i in idx):
        raise _refuse(e, "array indices mixed with slices (only x[ids] and basic slicing)")
    shape = x.aval.shape
    n_real = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if Ellipsis in idx:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - n_real) + idx[k + 1:]
    idx = idx + (slice(None),) * (len(shape) - sum(1 for i in idx if i is not None))
    starts, ends, axes, steps = [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            continue
        dim = shape[axis]
        if isinstance(i, slice):
            start, stop, step = i.indices(dim)
            if step < 0 and stop < 0:
                stop = -(2 ** 63)  # "through the first element" (ONNX reads -1 as the last)
        else:
            start = int(i) % dim
            stop, step = start + 1, 1
        if (start, stop, step) != (0, dim, 1):
            starts.append(start)
            ends.append(stop)
            axes.append(axis)
            steps.append(step)
        axis += 1
    y = b.atom(x)
    if axes:
        y = b.node("Slice", [y, b.ints(starts), b.ints(ends), b.ints(axes), b.ints(steps)])
    return b.node("Reshape", [y, b.ints(e.outvars[0].aval.shape)])


def _im2col(b, e):  # (N, C, H, W) -> (N, C, kh, kw, H_out, W_out) patches
    x, kernel, stride, padding, dilation = e.args[:5]
    pad_value = e.args[5] if len(e.args) > 5 else e.kwargs.get("pad_value", 0.0)
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    out = e.outvars[0].aval.shape
    ho, wo = out[-2:]
    dt = e.outvars[0].aval.dtype
    y = b.atom(x)
    if ph or pw:
        y = b.node("Pad", [y, b.ints([0, 0, ph, pw, 0, 0, ph, pw]), b.const(pad_value, dt)])
    cols = []
    for i in range(kh):
        for j in range(kw):
            s = b.node("Slice", [y, b.ints([i * dh, j * dw]),
                                 b.ints([i * dh + sh * (ho - 1) + 1, j * dw + sw * (wo - 1) + 1]),
                                 b.ints([2, 3]), b.ints([sh, sw])])
            cols.append(b.node("Unsqueeze", [s, b.ints([2])]))
    y = cols[0] if len(cols) == 1 else b.node("Concat", cols, axis=2)
    return b.node("Reshape", [y, b.ints(out)])


def _conv_s1(b, e):  # stride-1 correlation, w (O, C*kh*kw), geom ((kh, kw), pad, dilation)
    x, w, bias, geom = e.args
    (kh, kw), (ph, pw), (dh, dw) = geom
    o, ckk = w.aval.shape if type(w) is Var else w.shape
    wt = b.node("Reshape", [b.atom(w), b.ints([o, ckk // (kh * kw), kh, kw])])
    ins = [b.atom(x), wt] + ([] if bias is None else [b.atom(bias)])
    return b.node("Conv", ins, kernel_shape=[kh, kw], pads=[ph, pw, ph, pw],
                  dilations=[dh, dw], strides=[1, 1])


_SIMPLE = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
           "maximum": "Max", "minimum": "Min", "power": "Pow",
           "negative": "Neg", "exp": "Exp", "log": "Log", "tanh": "Tanh", "sqrt": "Sqrt",
           "absolute": "Abs", "expit": "Sigmoid", "relu": "Relu",
           "softplus": "Softplus", "sin": "Sin", "cos": "Cos", "floor": "Floor",
           "ceil": "Ceil", "sign": "Sign", "reciprocal": "Reciprocal", "erf": "Erf"}
_RULES = {**{k: _elementwise(v) for k, v in _SIMPLE.items()},
          "equal": _compare("Equal"), "not_equal": _compare("Equal", negate=True),
          "less": _compare("Less"), "greater": _compare("Greater"),
          "less_equal": _compare("LessOrEqual"), "greater_equal": _compare("GreaterOrEqual"),
          "logical_and": _compare("And"), "logical_or": _compare("Or"),
          "logical_not": _invert, "invert": _invert, "square": _square, "exp2": _exp2,
          "gelu": _gelu, "clip": _clip, "where": _where,
          "sum": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"),
          "max": _reduce("ReduceMax"), "amax": _reduce("ReduceMax"),
          "min": _reduce("ReduceMin"), "amin": _reduce("ReduceMin"),
          "reshape": _reshape, "transpose": _transpose,
          "contiguous": _identity, "astype": _astype, "broadcast_to": _broadcast_to,
          "zeros_like": _full_like(0), "ones_like": _full_like(1),
          "concatenate": _concatenate, "getitem": _getitem, "matmul": _matmul,
          "affine": _affine, "scale_shift": _scale_shift, "normalize": _normalize,
          "attention_softmax": _attention_softmax, "softmax": _softmax("Softmax"),
          "log_softmax": _softmax("LogSoftmax"), "im2col": _im2col, "conv_s1": _conv_s1}
ONNX_PRIMITIVES = tuple(sorted(_RULES))


class _Refused(NotImplementedError):
    pass


def _refuse(e, what):
    return _Refused(f"fnad.export.onnx: the primitive {e.prim.name!r} is exported, but not "
                    f"with {what}; rewrite that step of the function.")


# ----------------------------------------------------------------------------- export

def _onnx_module():
    try:
        import onnx  # noqa: PLC0415 - optional dependency (the interop extra)
    except ImportError:
        raise ImportError("fnad.export.onnx needs the `onnx` package: pip install onnx (or "
                          "fnad's interop extra: pip install 'fnad[interop]').") from None
    return onnx


def _value_info(h, name, aval):
    return h.make_tensor_value_info(name, h.np_dtype_to_tensor_dtype(np.dtype(aval.dtype)),
                                    list(aval.shape))


def _check_graph(graph):
    missing = sorted({e.prim.name for e in graph.eqns} - set(_RULES))
    if missing:
        raise NotImplementedError(
            f"fnad.export.onnx: {graph.name} uses the primitive(s) {missing}, which ONNX "
            f"export does not cover; it covers {', '.join(ONNX_PRIMITIVES)}. Rewrite those "
            "steps with covered operations, or export a smaller part of the function.")
    if graph.captured:
        raise ValueError("fnad.export.onnx: the function closes over values traced by an "
                         "outer transformation; export it outside of jit/grad/vmap.")


def onnx(fun, *example_args, path=None, opset=OPSET, name=None):
    """Export the forward function `fun` as an ONNX model, traced at `example_args`.

    The program `fnad.jit` would stage for `fun(*example_args)` becomes an ONNX graph:
    inputs `input_0, input_1, ...` (the flattened arguments, with their shapes and
    dtypes), outputs `output_0, ...` (the flattened results), arrays `fun` closes over as
    initializers. Close over the params (`lambda x: model(params, x)`) to ship weights
    inside the file; pass them as arguments to keep them inputs. A primitive outside
    `fnad.export.ONNX_PRIMITIVES` raises NotImplementedError naming it.

    Args:
      fun: a function of arrays (pytrees of them) returning arrays.
      *example_args: arguments fixing the shapes and dtypes (their values are not used).
      path: where to write the `.onnx` file (optional).
      opset: the ONNX opset (18 by default; at least 18).
      name: the graph's name (default: the function's).

    Returns:
      The `onnx.ModelProto` (checked with `onnx.checker`).

    Example:
      fnad.export.onnx(lambda x: mlp(params, x), np.zeros((1, 784), np.float32),
                       path="mlp.onnx")
      onnxruntime.InferenceSession("mlp.onnx").run(None, {"input_0": x})
    """
    onnx_pkg = _onnx_module()
    if opset < OPSET:
        raise ValueError(f"fnad.export.onnx: opset={opset}; the export needs opset >= {OPSET}.")
    graph = make_graph(fun)(*example_args)
    graph.name = name or graph.name
    _check_graph(graph)
    b = _Builder(onnx_pkg)
    inputs = []
    for i, v in enumerate(graph.invars):
        b.env[v] = f"input_{i}"
        inputs.append(_value_info(b.h, f"input_{i}", v.aval))
    for e in graph.eqns:
        out = _RULES[e.prim.name](b, e)
        outs = [out] if isinstance(out, str) else list(out)
        for v, o in zip(e.outvars, outs):
            b.env[v] = o
    outputs = []
    for i, v in enumerate(graph.outvars):
        aval = v.aval if type(v) is Var else SimpleNamespace(shape=np.shape(v),
                                                             dtype=np.result_type(v))
        b.nodes.append(b.h.make_node("Identity", [b.atom(v, aval.dtype)], [f"output_{i}"]))
        outputs.append(_value_info(b.h, f"output_{i}", aval))
    g = b.h.make_graph(b.nodes, graph.name, inputs, outputs, initializer=b.inits)
    model = b.h.make_model(g, opset_imports=[b.h.make_opsetid("", opset)],
                           producer_name="fnad")
    model.ir_version = min(model.ir_version, 10)  # what current runtimes load
    onnx_pkg.checker.check_model(model)
    if path is not None:
        onnx_pkg.save(model, os.fspath(path))
    return model

