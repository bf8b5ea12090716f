"""Op-table rows for fnad.numpy.fft (the format is described in tests/numpy/cases.py).

The table's arguments are real float64 arrays, so a complex input is passed as its real and
imaginary parts, and a complex output comes back as them stacked on a last axis: the rows
then check the complex rules through real functions, where JAX's and PyTorch's conventions
for complex cotangents agree. Odd lengths, padding and cropping by `n`/`s`, and every
`norm` appear.
"""

import fnad.numpy as fnp
from tests.numpy.casekit import OpCase, make_args, torch


def _split(z):
    return fnp.stack([fnp.real(z), fnp.imag(z)], axis=-1)


def _tsplit(z):
    return torch.view_as_real(z)


def _c2c(name, shape, kw, tkw):
    f = getattr(fnp.fft, name)
    tf = getattr(torch.fft, name) if torch else None
    return OpCase(f"fft.{name}", f"{shape} {kw}".replace("'", ""),
                  lambda x, y: _split(f(x + 1j * y, **kw)),
                  make_args(name, (shape, kw), ("real", "real"), (shape, shape)),
                  lambda x, y: _tsplit(tf(torch.complex(x, y), **tkw)))


def _r2c(name, shape, kw, tkw):
    f = getattr(fnp.fft, name)
    tf = getattr(torch.fft, name) if torch else None
    return OpCase(f"fft.{name}", f"{shape} {kw}".replace("'", ""),
                  lambda x: _split(f(x, **kw)),
                  make_args(name, (shape, kw), ("real",), (shape,)),
                  lambda x: _tsplit(tf(x, **tkw)))


def _c2r(name, shape, kw, tkw):
    f = getattr(fnp.fft, name)
    tf = getattr(torch.fft, name) if torch else None
    return OpCase(f"fft.{name}", f"{shape} {kw}".replace("'", ""),
                  lambda x, y: f(x + 1j * y, **kw),
                  make_args(name, (shape, kw), ("real", "real"), (shape, shape)),
                  lambda x, y: tf(torch.complex(x, y), **tkw))


def _t1(kw):
    """numpy's 1-D keywords as torch.fft's."""
    return {{"axis": "dim"}.get(k, k): v for k, v in kw.items()}


def _tn(kw):
    return {{"axes": "dim"}.get(k, k): v for k, v in kw.items()}


_ONE_D = [((5,), {}), ((2, 4), {"norm": "ortho"}), ((3, 5), {"n": 7, "axis": 0}),
          ((2, 7), {"n": 4, "norm": "forward"})]
_N_D = [((3, 5), {}), ((2, 3, 5), {"axes": (0, 2), "norm": "ortho"}),
        ((3, 4), {"s": (5, 3), "axes": (0, 1), "norm": "forward"})]
_TWO_D = [((3, 5), {}), ((2, 3, 4), {"s": (4, 5), "norm": "ortho"})]

FFT = []
for _name in ("fft", "ifft"):
    FFT += [_c2c(_name, s, kw, _t1(kw)) for s, kw in _ONE_D]
for _name in ("fftn", "ifftn"):
    FFT += [_c2c(_name, s, kw, _tn(kw)) for s, kw in _N_D]
for _name in ("fft2", "ifft2"):
    FFT += [_c2c(_name, s, kw, _tn(kw)) for s, kw in _TWO_D]
FFT += [_r2c("rfft", s, kw, _t1(kw)) for s, kw in _ONE_D]
FFT += [_r2c("rfftn", s, kw, _tn(kw)) for s, kw in _N_D]
FFT += [_r2c("rfft2", s, kw, _tn(kw)) for s, kw in _TWO_D]
# irfft: the default even length 2 (m - 1), odd and even n, and cropping or padding the
# half spectrum to n // 2 + 1 terms.
FFT += [_c2r("irfft", s, kw, _t1(kw)) for s, kw in [
    ((4,), {}), ((2, 4), {"n": 7, "norm": "ortho"}), ((3, 5), {"n": 4, "axis": 0}),
    ((2, 3), {"n": 9, "norm": "forward"}), ((2, 5), {"n": 5})]]
FFT += [_c2r("irfftn", s, kw, _tn(kw)) for s, kw in [
    ((3, 4), {}), ((3, 4), {"s": (3, 5), "axes": (0, 1), "norm": "ortho"}),
    ((2, 3, 3), {"s": (4, 5), "axes": (0, 2), "norm": "forward"})]]
FFT += [_c2r("irfft2", s, kw, _tn(kw)) for s, kw in [((3, 4), {}), ((2, 3, 4), {"s": (3, 7)})]]
FFT += [
    OpCase("fft.fftshift", "(3,4)", lambda x: fnp.fft.fftshift(x),
           make_args("fftshift", 0, ("real",), ((3, 4),)),
           lambda t: torch.fft.fftshift(t)),
    OpCase("fft.fftshift", "(2,5) axes=1", lambda x: fnp.fft.fftshift(x, axes=1),
           make_args("fftshift", 1, ("real",), ((2, 5),)),
           lambda t: torch.fft.fftshift(t, dim=1)),
    OpCase("fft.ifftshift", "(3,5)", lambda x: fnp.fft.ifftshift(x),
           make_args("ifftshift", 0, ("real",), ((3, 5),)),
           lambda t: torch.fft.ifftshift(t)),
]
