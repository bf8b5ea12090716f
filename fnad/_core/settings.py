"""Every environment variable fnad reads, declared once: the `FNAD_*` settings (`SETTINGS`)
and the variables other programs set that fnad looks at (`OTHER_VARIABLES`). No other module
of fnad reads `os.environ` (tests/core/test_settings.py checks it); docs/settings.md is
generated from these tables by tools/gen_settings_doc.py.

`setting(name)` gives a setting's value, checked: a value that is not allowed raises
`SettingError`, naming the variable, its value and what is allowed. An unset or empty
variable gives the default. When a setting is read is up to its reader (the `read` column):
some read it once (at import, on first use, in `distributed.initialize()`), others at each
call (each kernel call, each data lookup), so that `monkeypatch.setenv` or
`os.environ[...] = ...` takes effect on the next call. A read at each call costs one lookup
in `os.environ` and a string comparison: the text is parsed only when it differs from the
text last seen, so hot paths never parse it again and nothing needs refreshing.

To add a setting: one line in `SETTINGS`, then `python tools/gen_settings_doc.py`.

Example:
  from fnad.extend import setting
  threads = setting("FNAD_NUM_THREADS")     # None when unset; 2 for FNAD_NUM_THREADS=2
"""

import os
from pathlib import Path
from typing import Callable, NamedTuple

__all__ = ["SETTINGS", "OTHER_VARIABLES", "LAUNCHER_VARS", "Setting", "SettingError", "setting",
           "environ_get", "launcher_env", "cache_dir", "kernel_cache_dir"]


class SettingError(ValueError):
    """An `FNAD_*` environment variable holds a value that is not allowed."""


class Kind(NamedTuple):
    """What a setting's text may be: `expected` in words, `parse` (text -> value, raising
    ValueError) and an `example` of an allowed text."""
    expected: str
    parse: Callable[[str], object]
    example: str


def _int_from(low):
    def parse(text):
        n = int(text)
        if n < low:
            raise ValueError(text)
        return n
    return parse


def _choice(*values):
    def parse(text):
        if text.lower() not in values:
            raise ValueError(text)
        return text.lower()
    return Kind("one of " + ", ".join(values), parse, values[-1])


_FLAGS = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}

POSITIVE_INT = Kind("a positive integer", _int_from(1), "2")
COUNT = Kind("an integer >= 0", _int_from(0), "65536")
FLAG = Kind("1, true, yes or on; 0, false, no or off", lambda t: _FLAGS[t.lower()], "1")
PATH = Kind("a directory", str, "/tmp/fnad")


class Setting(NamedTuple):
    name: str
    kind: Kind
    default: object  # the value when the variable is unset or empty
    read: str  # when fnad reads it
    doc: str  # what it does; the text before the first ";" is its short description


# One line per setting where it fits (tinygrad's helpers.py). Change `read` with the reader.
SETTINGS = {s.name: s for s in [
    Setting("FNAD_NUM_THREADS", POSITIVE_INT, None, "each kernel call",
            "threads for fnad's CPU kernels; one pool serves fnad.kernels.cpu and fnad_nn's "
            "split passes; unset: the CPUs this process may use"),
    Setting("FNAD_CPU_KERNELS", _choice("numba", "numpy"), "numba", "each kernel call",
            "the fused float32 CPU kernels behind fnad_nn's GELU, softmax and layer norm; "
            "numpy: run their NumPy formulations instead (numba also needs numba installed)"),
    Setting("FNAD_MALLOC", _choice("system", "keep"), "system", "import",
            "what glibc's malloc does with freed arrays; system: leave its defaults (freed "
            "memory goes back to the OS), keep: raise its mmap and trim thresholds for the "
            "whole process, so freed arrays stay mapped to it (up to 1 GiB; docs/jit.md)"),
    Setting("FNAD_FUSION", _choice("numba", "numexpr", "numpy", "off"), None, "first jit trace",
            "jit's backend for fused elementwise kernels; unset: the fastest importable one"),
    Setting("FNAD_FAST_MATH", FLAG, False, "each jit trace",
            "fnad.jit's fast_math=True for every jitted function: vectorised approximations of "
            "exp/tanh/log/erf/sigmoid and reassociated row sums in its kernels (error bounds "
            "per op: docs/jit.md)"),
    Setting("FNAD_PARALLEL_MIN", COUNT, 1 << 62, "import",
            "elements from which fused numba kernels run their parallel (prange) variant; "
            "default: never"),
    Setting("FNAD_SPLIT_MIN", COUNT, 1 << 62, "import",
            "elements touched (full inputs and outputs) from which jit's fused elementwise "
            "kernels split their rows over fnad's thread pool; default: never (no gain "
            "measured on the loaded 2-core machine, docs/benchmarks.md)"),
    Setting("FNAD_CACHE_DIR", PATH, None, "each call",
            "fnad's cache (downloads, and jit's compiled kernels under kernels/); unset: "
            "$XDG_CACHE_HOME/fnad, else ~/.cache/fnad (kernels: ~/.cache/fnad/kernels)"),
    Setting("FNAD_DATA_DIR", PATH, None, "each call",
            "where fnad_nn.data looks for data sets (<dir>/<name>/) before the cache"),
    Setting("FNAD_OFFLINE", FLAG, False, "each call", "never download data sets"),
    Setting("FNAD_DEBUG_NANS", FLAG, False, "import",
            "start with fnad.config.debug_nans on: the first primitive whose result holds a "
            "NaN raises FloatingPointError naming it and your source line (slow; "
            "docs/transforms.md)"),
    Setting("FNAD_DEBUG_INFS", FLAG, False, "import",
            "start with fnad.config.debug_infs on: as FNAD_DEBUG_NANS, for infinities"),
    Setting("FNAD_NCCL", FLAG, None, "distributed.initialize()",
            "use NCCL for CuPy arrays in collectives; unset: when cupyx.distributed has it"),
    Setting("FNAD_CUDA_AWARE_MPI", FLAG, False, "distributed.initialize()",
            "hand CuPy buffers straight to MPI (an MPI built with CUDA) when NCCL is not used"),
    Setting("FNAD_DIST_JOIN_TIMEOUT", COUNT, 300, "distributed.initialize()",
            "seconds a process joining the MPI world waits for the others before it ends the "
            "job (a process on this machine that exited is seen at once); 0: wait forever"),
    Setting("FNAD_AUTOGRAD_SDIST", PATH, None, "tests/compat/test_autograd_suite.py",
            "autograd's source distribution (autograd-1.9.1.tar.gz) whose tests the compat "
            "job runs against fnad.autograd; unset: fetched with pip download"),
]}

# Variables that MPI launchers set in the processes they start: under any of them
# fnad.distributed joins the MPI world.
_JOIN = "fnad.distributed joins the MPI world"
_LAUNCHERS = {
    "PMI_SIZE": f"set by MPICH's and Intel MPI's hydra: {_JOIN}; the number of processes",
    "PMI_RANK": f"set by MPICH's and Intel MPI's hydra: {_JOIN}",
    "OMPI_COMM_WORLD_SIZE": f"set by Open MPI: {_JOIN}; the number of processes",
    "PMIX_RANK": f"set by PMIx launchers: {_JOIN}",
    "MV2_COMM_WORLD_SIZE": f"set by MVAPICH: {_JOIN}; the number of processes",
}
LAUNCHER_VARS = tuple(_LAUNCHERS)

# Variables set by others that fnad reads (as they are: they are not fnad's to check).
OTHER_VARIABLES = {
    "XDG_CACHE_HOME": "the user's cache directory; fnad's cache is $XDG_CACHE_HOME/fnad",
    "MPI_LOCALNRANKS": "set by MPICH's hydra: the processes it started on this machine, "
                       "watched while they join (a process that exited ends the job)",
    "OMPI_COMM_WORLD_LOCAL_SIZE": "the same, set by Open MPI",
    "OMPI_COMM_WORLD_RANK": "set by Open MPI: the process index, named in join errors",
    **_LAUNCHERS,
}

_last = {}  # setting name -> (the text last read, its value)


def setting(name):
    """The value of setting `name` (one of `SETTINGS`), read from the environment now.

    Raises SettingError when the variable holds a value that is not allowed.
    """
    text = os.environ.get(name)
    last = _last.get(name)
    if last is not None and last[0] == text:
        return last[1]
    value = _parse(SETTINGS[name], text)
    _last[name] = (text, value)
    return value


def _parse(s, text):
    if text is None or not text.strip():
        return s.default
    try:
        return s.kind.parse(text if s.kind is PATH else text.strip())
    except (ValueError, KeyError):
        raise SettingError(
            f"{s.name}={text!r} is not valid: expected {s.kind.expected} "
            f"({s.doc.split(';')[0]}); unset it or set e.g. {s.name}={s.kind.example}") from None


def environ_get(name):
    """The text of environment variable `name` (one of `OTHER_VARIABLES`), or None."""
    if name not in OTHER_VARIABLES:
        raise KeyError(f"environ_get: {name} is not declared; add it to OTHER_VARIABLES in "
                       "fnad/_core/settings.py (an FNAD_* variable goes in SETTINGS).")
    return os.environ.get(name)


def launcher_env():
    """The MPI launcher's variables that are set: {name: text}."""
    return {v: os.environ[v] for v in LAUNCHER_VARS if v in os.environ}


def _cache_root(xdg):
    if setting("FNAD_CACHE_DIR"):
        return Path(setting("FNAD_CACHE_DIR"))
    base = (environ_get("XDG_CACHE_HOME") if xdg else None) or Path.home() / ".cache"
    return Path(base) / "fnad"


def cache_dir():
    """The download cache: `$FNAD_CACHE_DIR`, else `$XDG_CACHE_HOME/fnad`, else
    `~/.cache/fnad`."""
    return _cache_root(xdg=True)


def kernel_cache_dir():
    """jit's compiled kernels: `kernels/` in `$FNAD_CACHE_DIR`, else in `~/.cache/fnad` (not
    under `$XDG_CACHE_HOME`: where these files have always been)."""
    return _cache_root(xdg=False) / "kernels"
