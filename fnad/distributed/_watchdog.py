"""A watchdog for joining the MPI world: run as a script (`python -I -S _watchdog.py ...`)
beside a process that is inside `MPI_Init`, which cannot be interrupted from Python.

`MPI_Init` waits until every process of the job has called it. A process that fails (or
exits) before its first fnad.distributed call never does, and MPI would let the others wait
forever; MPICH's mpiexec ends a job when a process dies of a signal, but not when one exits
before it joined. So while a process joins, this script watches it:

- on this machine, the job's processes are the children of one launcher process (MPICH's
  `hydra_pmi_proxy`, Open MPI's `orted`/`prted`); when fewer of them are alive than the
  launcher started (`MPI_LOCALNRANKS`, `OMPI_COMM_WORLD_LOCAL_SIZE`), one has already exited
  and will never join: about half a second after it is seen gone;
- on other machines, where a process cannot be seen: after `timeout` seconds (the setting
  `FNAD_DIST_JOIN_TIMEOUT`; 0 waits forever);

it prints why on stderr and kills the joining process (SIGKILL), and the launcher, seeing a
process killed, ends the whole job. The joining process writes a byte on the pipe (or
closes it) once it has joined; the script then exits quietly. It imports nothing of fnad
(it starts in a few milliseconds) and runs only under a launcher, only while joining.

Arguments: the joining process's pid, its index, the process count, the processes expected
on this machine (0: unknown) and the timeout in seconds.
"""

import os
import select
import signal
import sys
import time

LAUNCHERS = ("hydra_pmi_proxy", "orted", "prted")
POLL = 0.1  # seconds between looks at the machine's processes


def _stat(pid):
    """(state, parent pid) of process `pid` from /proc, or None where it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def _comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def alive_siblings(pid):
    """How many children of `pid`'s parent are alive (`pid` included), where that parent
    is an MPI launcher's process on this machine; None where that cannot be seen."""
    st = _stat(pid)
    if st is None or _comm(st[1]) not in LAUNCHERS:
        return None
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = _stat(int(name))
            if s is not None and s[1] == st[1] and s[0] not in "ZX":
                count += 1
    return count


def _end(pid, index, count, why):
    sys.stderr.write(
        f"\nfnad.distributed: process {index} of {count} cannot join the job's MPI world: "
        f"{why}. A process that fails or exits before its first fnad.distributed call never "
        "joins, and MPI would wait for it forever; ending the whole job (its own error, if "
        "any, is printed above). Call dist.initialize() at the top of the script to make the "
        "processes join before anything else can fail.\n")
    sys.stderr.flush()
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def watch(pid, index, count, local, timeout):
    """Watch process `pid` join; returns once it has joined or been ended."""
    start = time.monotonic()
    missing_since = None
    while True:
        ready, _, _ = select.select([0], [], [], POLL)
        if ready or os.getppid() != pid:  # joined (a byte, or the pipe closed), or gone
            return
        alive = alive_siblings(pid) if local > 1 else None
        now = time.monotonic()
        if alive is not None and alive < local:
            missing_since = missing_since if missing_since is not None else now
            if now - missing_since >= 0.5:  # not a process still starting: one has gone
                return _end(pid, index, count, f"{local - alive} of the {local} processes "
                            "the launcher started on this machine have already exited")
        else:
            missing_since = None
        if timeout and now - start > timeout:
            return _end(pid, index, count, f"the other processes have not joined within "
                        f"{timeout} s (FNAD_DIST_JOIN_TIMEOUT; a process on another machine "
                        "may have failed, or may be slower than that to reach its first "
                        "fnad.distributed call: then raise the timeout)")


if __name__ == "__main__":
    watch(*map(int, sys.argv[1:6]))
