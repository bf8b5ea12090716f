"""fnad.export: functions out of fnad. `fnad.export.onnx(fun, *example_args, path=...)`
writes the program `fnad.jit` stages for a forward function as an ONNX model;
`ONNX_PRIMITIVES` lists the primitives it covers (docs/interop.md)."""

from ._onnx import ONNX_PRIMITIVES as ONNX_PRIMITIVES
from ._onnx import onnx as onnx
