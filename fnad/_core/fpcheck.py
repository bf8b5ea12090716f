"""The state of fnad.config's debug_nans / debug_infs switches (set in fnad/_jit/debug.py),
and NumPy's own FloatingPointError ("invalid value encountered in log", raised while a
switch is on) restated with the primitive and the user's source line, for the layers that
call NumPy's ufuncs on plain arrays (vmap's rules, a jitted function run op by op)."""

import linecache
import os
import re
import sys

__all__ = ["CHECKS", "checks_on", "user_line", "restate"]

CHECKS = {"nan": False, "inf": False}
_FNAD_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NUMPY = re.compile(r"(invalid value|divide by zero|overflow) encountered in (\w+)")


def checks_on():
    """True while debug_nans or debug_infs is on."""
    return CHECKS["nan"] or CHECKS["inf"]


def _outside(name):
    return not os.path.abspath(name).startswith(_FNAD_DIR + os.sep)


def _describe(filename, lineno):
    code = linecache.getline(filename, lineno).strip()
    return f"{filename}:{lineno}" + (f" ({code})" if code else "")


def user_line(depth=2):
    """'file:line (code)' of the innermost calling frame outside fnad, or None."""
    f = sys._getframe(depth)
    while f is not None:
        if _outside(f.f_code.co_filename):
            return _describe(f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def restate(e):
    """NumPy's FloatingPointError `e` as debug_nans/debug_infs's error (the primitive and the
    innermost line of user code in its traceback); `e` itself when no switch is on or it is
    already one of ours."""
    m = _NUMPY.search(str(e))
    if not checks_on() or m is None or str(e).startswith("debug_"):
        return e
    line, tb = None, e.__traceback__
    while tb is not None:
        if _outside(tb.tb_frame.f_code.co_filename):
            line = _describe(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    kind = "nan" if m.group(1) == "invalid value" else "inf"
    switch = "debug_nans" if kind == "nan" else "debug_infs"
    at = f" at {line}" if line else ""
    return FloatingPointError(
        f"{switch}: invalid value ({kind}) produced by primitive '{m.group(2)}'{at}. Turn the "
        f"check off with fnad.config.update('{switch}', False) once found.")
