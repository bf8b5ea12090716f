"""fnad.distributed across processes: each test launches `mpiexec -n 2` (a few seconds) with a
timeout, and skips where mpi4py or mpiexec is not installed. The jobs live in jobs/."""

import json

import numpy as np
import pytest

import fnad
import fnad.distributed as dist
import fnad_optim as optim

from . import gpt_setup as g
from .helpers import JOBS, job_env, needs_mpi, run_mpi

pytestmark = needs_mpi


def test_collectives_across_two_processes():
    """Values and dtypes, buckets, SPMD derivatives against differences of the summed loss,
    vmap, jit, the host-staging (CuPy fallback) transport, mismatch errors."""
    r = run_mpi(JOBS / "collectives.py")
    assert r.returncode == 0, r
    assert "done (process 0)" in r.out and "done (process 1)" in r.out, r


def test_whole_tree_decisions_agree_around_a_sharded_optimizer():
    """apply_if_finite inside or outside a ZeRO-1 optimizer, clip_by_global_norm, LAMB's
    trust ratio and zero_nans decide from every process's rows (issue 31)."""
    r = run_mpi(JOBS / "sharding.py")
    assert r.returncode == 0, r
    assert "done (process 0)" in r.out and "done (process 1)" in r.out, r


def test_replicas_that_drift_apart_are_caught(tmp_path):
    """Without data_parallel the processes' params drift apart: dist.save and
    dist.check_replicas raise on every process, naming the leaf, and write nothing;
    data_parallel compares a checksum every check_every updates, eagerly and under jit
    (issue 31)."""
    r = run_mpi(JOBS / "replicas.py", tmp_path)
    assert r.returncode == 0, r
    assert "done (process 0)" in r.out and "done (process 1)" in r.out, r


def _one_process_sharded_to_step_10(path):
    """The sharded optimizer in one process (where it is plain AdamW) to step 10, saved as a
    2-process run would save it; returns the one-process params after 20 steps."""
    z = g.sharded_optimizer()
    params, state = g.run_sharded(g.init_params(), z.init(g.init_params()), 1, 10, z)
    dist.save(path, {"params": params, "step": 10,
                     "opt_state": optim.gather_state(state, params)})
    return g.run_sharded(params, state, 11, g.STEPS, z)[0]


def test_two_process_gpt_training_equals_one_process(tmp_path):
    """20 steps of a float64 GPT: 2 processes, each on half of every batch, against one
    process on the global batch (<= 1e-12 normwise; parameters bit-identical across
    processes after every step); AdamW moments sharded (ZeRO-1) give the unsharded
    parameters bit for bit with half the optimizer memory per process; checkpoints move
    between one and two processes."""
    one_20 = _one_process_sharded_to_step_10(tmp_path / "one10.npz")
    r = run_mpi(JOBS / "train.py", tmp_path, timeout=240)
    assert r.returncode == 0, r
    res = json.loads((tmp_path / "result.json").read_text())
    assert res["max_rel_err_dp_vs_one_process"] <= 1e-12, res
    assert res["max_rel_err_jit_dp_vs_one_process"] <= 1e-12, res
    assert res["bit_identical_across_processes"] is True
    assert res["sharded_equals_unsharded"] is True
    full, per = res["optimizer_state_bytes"]["unsharded"], res["sharded_bytes_per_process"]
    assert all(b <= 0.52 * full for b in per), res  # half, plus counters and the index
    assert res["resumed_from_one_process_rel_err"] <= 1e-12, res

    final = fnad.load(tmp_path / "final.npz")
    assert g.rel_err(final["zero"], one_20) <= 1e-12
    # the 2-process checkpoint of step 10, resumed by one process
    z = g.sharded_optimizer()
    like = {"params": g.init_params(), "step": 0,
            "opt_state": optim.gather_state(z.init(g.init_params()), g.init_params())}
    st = fnad.load(tmp_path / "zero10.npz", like=like)
    params, _ = g.run_sharded(st["params"], optim.scatter_state(st["opt_state"], st["params"]),
                              st["step"] + 1, g.STEPS, z)
    assert g.rel_err(params, final["zero"]) <= 1e-12


def test_an_uncaught_exception_ends_the_whole_job():
    r = run_mpi(JOBS / "faults.py", "raise", timeout=60)
    assert r.returncode != 0 and r.seconds < 30, r
    assert "process 1 of 2 failed with an uncaught exception" in r.out, r
    assert "[process 1] ValueError: boom on process 1, on purpose" in r.out, r
    assert "reached the end" not in r.out


def test_a_process_leaving_early_stops_the_one_waiting_for_it():
    r = run_mpi(JOBS / "faults.py", "exit", timeout=60)
    assert r.returncode != 0 and r.seconds < 30, r
    assert ("process 1 exited (after its collective #1) while process 0 was waiting for it in "
            "psum (collective #2)") in r.out, r


@pytest.mark.parametrize("mode", ["raise", "exit"])
def test_a_process_failing_before_its_first_call_ends_the_job(mode):
    """Process 1 raises (or exits) before it imports fnad; process 0, joining the MPI world
    at its first collective, sees it gone and ends the job (issue 31: it waited forever)."""
    r = run_mpi(JOBS / "early.py", mode, timeout=60)
    assert r.returncode != 0 and r.seconds < 30, r
    assert ("process 0 of 2 cannot join the job's MPI world: 1 of the 2 processes the "
            "launcher started on this machine have already exited") in r.out, r
    if mode == "raise":
        assert "ValueError: boom on process 1 before fnad, on purpose" in r.out, r
    assert "reached the end" not in r.out, r


def test_a_process_later_than_the_join_timeout_ends_the_job():
    r = run_mpi(JOBS / "early.py", "slow", timeout=60, env=job_env(FNAD_DIST_JOIN_TIMEOUT="3"))
    assert r.returncode != 0 and r.seconds < 30, r
    assert "the other processes have not joined within 3 s (FNAD_DIST_JOIN_TIMEOUT" in r.out, r


def test_a_process_killed_mid_save_leaves_the_previous_checkpoint(tmp_path):
    path = tmp_path / "ckpt.npz"
    r = run_mpi(JOBS / "faults.py", "kill_mid_save", path, timeout=60)
    assert r.returncode != 0 and r.seconds < 30, r
    st = fnad.load(path)
    assert st["step"] == 1
    np.testing.assert_array_equal(st["w"], np.arange(4.0))
    assert list(tmp_path.glob("ckpt.npz.tmp*")), "the killed save left its temporary file"
    fnad.save(path, {"step": 3})  # the next save clears it
    assert not list(tmp_path.glob("ckpt.npz.tmp*")) and fnad.load(path)["step"] == 3


@pytest.mark.parametrize("n", [1, 2])
def test_under_mpiexec_every_process_knows_the_world(n):
    code = JOBS / "world.py"
    r = run_mpi(code, n=n, timeout=60)
    assert r.returncode == 0, r
    for i in range(n):
        assert f"process {i} of {n}, MPI" in r.out, r
