"""Counting host-device transfers of the simulated device.

Every copy between host and device goes through `record`: explicit ones (`asarray` of host
data, `asnumpy`, `.get()`), the implicit ones CuPy makes without being asked (`float(x)`,
`bool(x)`, `x.item()`, a NumPy index array, `repr`) and the synchronisations that read a
result's size back to the host (boolean-mask indexing, `nonzero`, `unique`). `TOTALS` counts
them all; `transfers()` records each, with the line of fnad (or of the test) that caused it;
`no_transfers()` makes the first one raise, as `cupyx.allow_synchronize(False)` does on a GPU.
"""

import contextlib
import os
import sys

import numpy as np

TO_DEVICE, TO_HOST = "to_device", "to_host"
TOTALS = {TO_DEVICE: 0, TO_HOST: 0}
_LOGS = []
_FORBIDDEN = []
_PAUSED = []
_HERE = os.path.dirname(os.path.abspath(__file__))
_SKIP = tuple(os.path.join(_HERE, f) for f in ("_array.py", "_transfers.py", "simcupy.py",
                                                "simcupyx.py")) + (
    os.path.dirname(np.__file__), os.path.dirname(os.__file__), "<frozen")


class HostTransferError(RuntimeError):
    """A host-device transfer happened where none was allowed (`no_transfers()`)."""


class Transfer:
    __slots__ = ("direction", "what", "where")

    def __init__(self, direction, what, where):
        self.direction, self.what, self.where = direction, what, where

    def __repr__(self):
        arrow = "host -> device" if self.direction == TO_DEVICE else "device -> host"
        return f"{arrow}: {self.what}, at {self.where}"


class TransferLog:
    """The transfers made while a `transfers()` block ran."""

    def __init__(self):
        self.events = []

    @property
    def to_device(self):
        return sum(e.direction == TO_DEVICE for e in self.events)

    @property
    def to_host(self):
        return sum(e.direction == TO_HOST for e in self.events)

    def __len__(self):
        return len(self.events)

    def __repr__(self):
        if not self.events:
            return "no host-device transfers"
        return f"{len(self.events)} host-device transfer(s):\n" + "\n".join(
            f"  {e!r}" for e in self.events)


def _where():
    """The innermost frames outside this package and NumPy: who asked for the copy."""
    f = sys._getframe(2)
    frames = []
    while f is not None and len(frames) < 3:
        path = f.f_code.co_filename
        if not path.startswith(_SKIP):
            frames.append(f"{os.path.relpath(path)}:{f.f_lineno} ({f.f_code.co_name})")
        f = f.f_back
    return " < ".join(frames) or "?"


def record(direction, what):
    """Count one transfer (and raise under `no_transfers()`)."""
    if _PAUSED:
        return
    TOTALS[direction] += 1
    if _LOGS or _FORBIDDEN:
        event = Transfer(direction, what, _where())
        for log in _LOGS:
            log.events.append(event)
        if _FORBIDDEN:
            raise HostTransferError(f"a host-device transfer where none is allowed: {event!r}")


@contextlib.contextmanager
def transfers():
    """Record the transfers made inside the block: `with transfers() as log: ...`."""
    log = TransferLog()
    _LOGS.append(log)
    try:
        yield log
    finally:
        _LOGS.remove(log)


@contextlib.contextmanager
def paused():
    """Count nothing inside the block (a test moving its own data)."""
    _PAUSED.append(True)
    try:
        yield
    finally:
        _PAUSED.pop()


@contextlib.contextmanager
def no_transfers():
    """Make every transfer inside the block raise `HostTransferError`."""
    _FORBIDDEN.append(True)
    try:
        yield
    finally:
        _FORBIDDEN.pop()
