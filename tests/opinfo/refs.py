"""torch-side references where the OpInfo's op returns values fixed only up to a gauge (the
signs/phases of singular and eigen vectors): the same gauge-free functions the mapping takes
of fnad's results. Imported only with torch present."""

import numpy as np
import torch

_DTYPES = {torch.float64: np.float64, torch.float32: np.float32, torch.float16: np.float16,
           torch.complex128: np.complex128, torch.complex64: np.complex64,
           torch.int64: np.int64, torch.int32: np.int32, torch.int16: np.int16,
           torch.int8: np.int8, torch.uint8: np.uint8, torch.bool: np.bool_}


def np_dtype(d):
    if d not in _DTYPES:
        from tests.opinfo.adapt import Skip
        raise Skip(f"dtype {d}")
    return np.dtype(_DTYPES[d])


def _svd_free(u, s, vh):
    k = s.shape[-1]
    return s, u[..., :k].abs() ** 2, vh[..., :k, :].abs() ** 2


def linalg_svd(x, full_matrices=True, **k):
    return _svd_free(*torch.linalg.svd(x, full_matrices=full_matrices, **k))


def svd(x, some=True, **k):
    u, s, v = torch.svd(x, some=some, **k)
    return _svd_free(u, s, v.mH)


def eigh(x, UPLO="L", **k):
    w, v = torch.linalg.eigh(x, UPLO=UPLO, **k)
    return w, v.abs() ** 2


def lstsq(a, b, driver=None, **k):
    return torch.linalg.lstsq(a, b, driver=driver, **k).solution
