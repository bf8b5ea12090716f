"""fnad.distributed in one process (no mpiexec): the world, every collective as the identity
with its rules (check_grads, jit, vmap), the argument checks, the transport choice, buckets,
the mismatch message, and the one-process behaviour of fnad_optim's and fnad_nn.data's
data-parallel pieces."""

import subprocess
import sys

import numpy as np
import pytest

import fnad
import fnad.distributed as dist
import fnad.numpy as fnp
import fnad_optim as optim
from fnad.distributed import _world
from fnad.distributed._agree import mismatch_message
from fnad.distributed._buckets import (aligned_offsets, buckets, empty, groups,
                                       reduction_dtype)
from fnad.distributed._transport import (HostStagingTransport, MPITransport, NCCLTransport,
                                         _make, choose_gpu_transport)
from fnad.test_util import check_grads
from fnad_nn import data
from fnad_optim._distributed import _piece, _rows

from .helpers import ROOT


def test_importing_fnad_does_not_import_mpi4py():
    code = ("import sys, numpy as np, fnad, fnad.distributed as d; d.psum(np.ones(2)); "
            "print(d.initialize(), 'mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "World(process 0 of 1, one process, no MPI) False"


def test_one_process_world_is_idempotent():
    w = dist.initialize()
    assert dist.initialize() is w and dist.initialize(mpi=False) is w
    assert (dist.process_index(), dist.process_count(), w.local) == (0, 1, True)
    assert fnad.distributed is dist  # also an attribute of fnad
    with pytest.raises(RuntimeError, match="cannot change to mpi=True"):
        dist.initialize(mpi=True)
    dist.barrier()


def test_launcher_detection():
    assert _world.launched_by_mpi({"PMI_RANK": "0", "PMI_SIZE": "2"})
    assert _world.launched_by_mpi({"OMPI_COMM_WORLD_SIZE": "4"})
    assert not _world.launched_by_mpi({"PATH": "/bin"})


def test_a_launcher_without_mpi4py_is_an_error(monkeypatch):
    """Several processes started by mpiexec without mpi4py would each train alone: refuse."""
    def missing():
        raise ImportError("No module named 'mpi4py'")

    monkeypatch.setattr(_world, "_WORLD", None)
    monkeypatch.setattr(_world, "_import_mpi", missing)
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "1")
    with pytest.raises(ImportError, match="pip install mpi4py mpich"):
        dist.initialize()
    monkeypatch.setenv("PMI_SIZE", "1")  # `mpiexec -n 1` without mpi4py: one process is fine
    assert dist.initialize().local


TREE = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "i32": np.arange(3, dtype=np.int32),
        "c": np.array([1 + 2j]), "s": 2.5}


def test_collectives_are_identities_keeping_dtypes():
    s = dist.psum(TREE)
    for k in ["f32", "i32", "c"]:
        assert s[k] is TREE[k]
    assert s["s"].dtype == np.float64 and s["s"] == 2.5
    m = dist.pmean({"f": TREE["f32"], "i": TREE["i32"]})
    assert m["f"] is TREE["f32"] and m["i"].dtype == np.float64  # int mean: floats, as JAX
    g = dist.all_gather(TREE)
    assert g["f32"].shape == (1, 2, 3) and g["i32"].dtype == np.int32
    assert dist.all_gather(TREE["f32"], axis=-1).shape == (2, 3, 1)
    np.testing.assert_array_equal(dist.all_gather(TREE["f32"], axis=1, tiled=True), TREE["f32"])
    assert dist.psum_scatter(np.ones((1, 4))).shape == (4,)
    assert dist.psum_scatter(np.ones((2, 4)), 1, tiled=True).shape == (2, 4)
    assert dist.broadcast(TREE)["i32"] is TREE["i32"]
    assert dist.psum({}) == {} and dist.all_gather([]) == []
    flags = dist.all_gather(np.array([True, False]))
    assert flags.dtype == np.bool_ and flags.shape == (1, 2)


def test_argument_errors_say_what_to_do():
    with pytest.raises(TypeError, match="sum of booleans"):
        dist.psum({"ok": np.ones(2), "flag": np.array(True)})
    with pytest.raises(TypeError, match=r"leaf at \['name'\] is a str"):
        dist.psum({"name": "adam"})
    with pytest.raises(ValueError, match="root=3 must be a process index, 0 to 0"):
        dist.broadcast(np.ones(2), root=3)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        dist.all_gather(np.ones((2, 2)), axis=3)
    with pytest.raises(ValueError, match="0-d"):
        dist.all_gather(np.float64(1.0), tiled=True)
    with pytest.raises(ValueError, match="must have size exactly 1"):
        dist.psum_scatter(np.ones((2, 3)))
    with pytest.raises(ValueError, match="bucket_bytes=0"):
        dist.psum(np.ones(2), bucket_bytes=0)


@pytest.mark.parametrize("name,f", [
    ("psum", lambda x: fnp.sin(dist.psum(x)) * x),
    ("pmean", lambda x: dist.pmean({"a": x ** 2})["a"]),
    ("all_gather", lambda x: fnp.tanh(dist.all_gather(x, axis=1)) * 2),
    ("all_gather_tiled", lambda x: dist.all_gather(x * x, axis=0, tiled=True)),
    ("psum_scatter", lambda x: fnp.exp(dist.psum_scatter(x[None]))),
    ("broadcast", lambda x: dist.broadcast([x ** 3])[0]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_check_grads_of_each_collective(name, f):
    x = np.random.default_rng(0).normal(size=(2, 3))
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))


def test_jit_stages_a_collective_as_one_equation():
    x = np.random.default_rng(1).normal(size=(3, 2))
    for fun, name in [(lambda t: dist.psum(t), "psum"),
                      (lambda t: dist.all_gather(t), "all_gather"),
                      (lambda t: dist.broadcast(t), "broadcast_from_root"),
                      (lambda t: dist.psum({"a": t, "b": [t, t * 2]}), "psum")]:
        graph = fnad.make_graph(fun)(x)
        names = [e.prim.name for e in graph.eqns]
        assert names[-1:] == [name] and names.count(name) == 1, graph  # a whole tree, once
    f = fnad.jit(lambda t: fnp.sum(dist.all_gather(t) ** 2))
    np.testing.assert_allclose(f(x), np.sum(x ** 2))
    np.testing.assert_allclose(fnad.jit(fnad.grad(f))(x), 2 * x)
    assert fnad.jit(lambda t: dist.psum(t))(x.astype(np.int32)).dtype == np.int32


def test_vmap_of_collectives():
    x = np.random.default_rng(2).normal(size=(4, 3))
    np.testing.assert_array_equal(fnad.vmap(dist.psum)(x), x)
    assert fnad.vmap(lambda t: dist.all_gather(t, axis=1, tiled=False))(x).shape == (4, 3, 1)
    assert fnad.vmap(lambda t: dist.all_gather(t), in_axes=1)(x).shape == (3, 1, 4)
    assert fnad.vmap(lambda t: dist.psum_scatter(t, tiled=True))(x).shape == (4, 3)
    per_example = fnad.vmap(fnad.grad(lambda w, t: fnp.sum(dist.pmean(w * t) ** 2)),
                            in_axes=(None, 0))(np.ones(3), x)
    np.testing.assert_allclose(per_example, 2 * x ** 2)


def test_process_key_folds_the_index_and_save_writes_once(tmp_path):
    key = fnad.random.PRNGKey(3)
    np.testing.assert_array_equal(dist.process_key(key), fnad.random.fold_in(key, 0))
    dist.save(tmp_path / "c.npz", {"w": np.arange(3.0)})
    np.testing.assert_array_equal(fnad.load(tmp_path / "c.npz")["w"], np.arange(3.0))


def test_gpu_transport_choice():
    assert choose_gpu_transport(None, True, False) == "nccl"
    assert choose_gpu_transport(None, True, True) == "nccl"
    assert choose_gpu_transport(None, False, False) == "host"
    assert choose_gpu_transport(None, False, True) == "cuda-aware-mpi"
    assert choose_gpu_transport(False, True, True) == "cuda-aware-mpi"
    assert choose_gpu_transport(False, True, False) == "host"
    with pytest.raises(RuntimeError, match="nccl=True"):
        choose_gpu_transport(True, False, False)


class _Recorder:
    """Stands in for a communicator or a transport: records each call's name, the dtype and
    size of its arrays and its other arguments."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name,) + tuple((a.dtype.str, a.size) if hasattr(a, "dtype")
                                              else a for a in args))
        return record


def test_nccl_transport_moves_bytes_and_falls_back_for_missing_dtypes():
    t = NCCLTransport.__new__(NCCLTransport)  # no GPU here: NCCL's communicator recorded
    t.comm, t.fallback = _Recorder(), _Recorder()
    f32, i16 = np.ones(6, np.float32), np.ones(6, np.int16)
    t.allreduce(f32, f32)
    t.allreduce(i16, i16)  # NCCL has no int16: through the host-memory transport
    t.allgather(f32, np.ones(12, np.float32))
    t.bcast(np.ones((2, 3), np.bool_), 1)
    t.reduce_scatter(f32, np.ones(3, np.float32))
    t.reduce_scatter(i16, np.ones(3, np.int16))
    assert t.comm.calls == [("all_reduce", ("<f4", 6), ("<f4", 6), "sum"),
                            ("all_gather", ("|u1", 24), ("|u1", 48), 24),
                            ("broadcast", ("|u1", 6), 1),
                            ("reduce_scatter", ("<f4", 6), ("<f4", 3), 3, "sum")]
    assert t.fallback.calls == [("allreduce", ("<i2", 6), ("<i2", 6)),
                                ("reduce_scatter", ("<i2", 6), ("<i2", 3))]


def test_gpu_transports_are_made_as_chosen():
    class World:
        comm, mpi, nccl, cuda_aware_mpi = _Recorder(), None, False, False

    w = World()
    assert type(_make(w, "cpu")) is MPITransport
    host = _make(w, "gpu")
    assert type(host) is HostStagingTransport and type(host.inner) is MPITransport
    w.cuda_aware_mpi = True
    aware = _make(w, "gpu")
    assert type(aware) is MPITransport and aware.device and aware.name == "cuda-aware-mpi"


def test_buckets():
    assert buckets([10, 10, 10], 25) == [[0, 1], [2]]
    assert buckets([40, 10, 10, 40], 25) == [[0], [1, 2], [3]]  # a big leaf goes alone
    assert buckets([], 25) == []
    assert aligned_offsets([3, 16, 1]) == ([0, 16, 32], 48)
    leaves = [np.ones(2, np.float32), np.ones(3), np.ones(1, np.float32)]
    assert [g[2] for g in groups(leaves, by_dtype=True)] == [[0, 2], [1]]
    assert [g[2] for g in groups(leaves, by_dtype=False)] == [[0, 1, 2]]
    assert reduction_dtype(np.dtype(np.float16)) == np.float32
    assert reduction_dtype(np.dtype(np.int8)) == np.int8


def test_receive_buffers_are_reused_once_nothing_uses_them():
    a = empty(np, (2**15,), np.float64)  # 256 KiB: pooled
    where = a.ctypes.data
    b = empty(np, (2**15,), np.float64)
    assert b.ctypes.data != where  # `a` is alive: its memory is not handed out again
    del a
    c = empty(np, (2**14, 2), np.float64)
    assert c.ctypes.data == where and c.shape == (2**14, 2)
    view = c[:3]
    del c
    assert empty(np, (2**15,), np.float64).ctypes.data != where  # a view keeps it in use
    del view, b
    assert empty(np, (2**15,), np.float64).ctypes.data == where
    assert empty(np, (2**12,), np.uint8).base is None  # small arrays are not pooled


def test_mismatch_message_names_both_sides():
    a = ["collective #4", "psum() of PyTreeDef({'w': *})", "['w']: float64[3] on cpu"]
    b = ["collective #4", "psum() of PyTreeDef({'w': *})", "['w']: float32[3] on cpu"]
    text = mismatch_message("psum", [a, a, b])
    assert "process 0 passes ['w']: float64[3] on cpu" in text
    assert "process 2 passes ['w']: float32[3] on cpu" in text
    c = ["collective #4", "all_gather(axes=(0,), tiled=False) of PyTreeDef(*)", "x"]
    assert "process 1 is at its collective #4: all_gather" in mismatch_message("psum", [a, c])


# ----------------------------------------------------------------------------- fnad_optim

PARAMS = {"w": np.arange(15.0).reshape(5, 3) / 10, "b": np.linspace(-1, 1, 3),
          "s": np.array(0.5)}
GRADS = fnad.tree_map(lambda p: np.cos(p * 3) + 0.1, PARAMS)


def _decay(p):
    return fnad.tree_map(lambda x: x.ndim > 1, p)


def test_rows_of_each_process_cover_a_leaf_once():
    for rows in [0, 1, 2, 5, 7, 8]:
        for count in [1, 2, 3, 4]:
            parts = [_rows(rows, i, count) for i in range(count)]
            got = np.concatenate([np.arange(rows)[a:b] for a, b, _ in parts])
            np.testing.assert_array_equal(got, np.arange(rows))
            assert all(b - a <= blk for a, b, blk in parts)
    assert _piece(np.array(2.0), 1, 2) == 2.0  # 0-d leaves are kept whole


@pytest.mark.parametrize("make", [
    lambda: optim.adamw(1e-2, mask=_decay), lambda: optim.sgd(0.1, momentum=0.9),
    lambda: optim.rmsprop(1e-2, centered=True), lambda: optim.lion(1e-3),
    lambda: optim.apply_if_finite(optim.adam(1e-2)), lambda: optim.multi_steps(optim.adam(1e-2), 2),
], ids=["adamw_masked", "sgd_momentum", "rmsprop", "lion", "apply_if_finite", "multi_steps"])
def test_one_process_data_parallel_and_sharded_equal_the_optimizer(make):
    ref, dp = make(), optim.data_parallel(make())
    z = optim.data_parallel(make(), shard_state=True)
    s_ref, s_dp, s_z = ref.init(PARAMS), dp.init(PARAMS), z.init(PARAMS)
    p_ref = p_dp = p_z = PARAMS
    for _ in range(3):
        u, s_ref = ref.update(GRADS, s_ref, p_ref)
        p_ref = optim.apply_updates(p_ref, u)
        u, s_dp = dp.update(GRADS, s_dp, p_dp)
        p_dp = optim.apply_updates(p_dp, u)
        u, s_z = fnad.jit(z.update)(GRADS, s_z, p_z)
        p_z = optim.apply_updates(p_z, u)
    for a, b, c in zip(fnad.tree_leaves(p_ref), fnad.tree_leaves(p_dp), fnad.tree_leaves(p_z)):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    full = optim.gather_state(s_z, p_z)  # one process: already whole
    again = optim.scatter_state(full, p_z)
    for a, b in zip(fnad.tree_leaves(s_z), fnad.tree_leaves(again)):
        np.testing.assert_array_equal(a, b)


def test_sharded_state_knows_which_leaves_are_per_parameter():
    state = optim.shard_optimizer_state(optim.adamw(1e-2, mask=_decay)).init(PARAMS)
    # leaves: count, mu[b, s, w], nu[b, s, w] (dict keys sorted); 0-d leaves are whole
    np.testing.assert_array_equal(state.sources[:7], [-1, 0, -1, 2, 0, -1, 2])
    bad = optim.GradientTransformation(lambda p: {"sum": fnp.concatenate([p["b"], p["w"][0]])},
                                       lambda u, s, p=None: (u, s))
    with pytest.raises(ValueError, match="cannot be split by rows"):
        optim.shard_optimizer_state(bad).init(PARAMS)


# ----------------------------------------------------------------------------- fnad_nn.data

def test_shard_rows_gives_disjoint_equal_parts():
    x = np.arange(12).reshape(6, 2)
    parts = [data.shard_rows(x, index=i, count=3) for i in range(3)]
    np.testing.assert_array_equal(np.concatenate(parts), x)
    xs, ys = data.shard_batch((x, x[:, 0]), index=1, count=2)
    np.testing.assert_array_equal(xs, x[3:]) and np.testing.assert_array_equal(ys, x[3:, 0])
    with pytest.raises(ValueError, match="does not split into 4 equal parts"):
        data.shard_rows(x, index=0, count=4)
    one = data.shard_rows(x)  # one process: the whole batch
    assert one.shape == x.shape


def test_one_process_sharded_batches_are_the_global_ones():
    rng_a, rng_b = np.random.default_rng(0), np.random.default_rng(0)
    a = data.minibatches(10, 4, rng=rng_a)
    b = data.minibatches(10, 4, rng=rng_b, shard=True)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    corpus = data.CharCorpus("abcdefghij" * 20)
    key = fnad.random.PRNGKey(0)
    for u, v in zip(corpus.batch("train", 4, 5, key=key),
                    corpus.batch("train", 4, 5, key=key, shard=True)):
        np.testing.assert_array_equal(u, v)


def _docs_block(marker):
    text = (ROOT / "docs" / "distributed.md").read_text()
    after = text[text.index(f"<!-- {marker} -->"):]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_documented_sharded_checkpoint_round_trip(tmp_path, monkeypatch):
    """The example of docs/distributed.md for reloading a sharded optimizer state with
    `like=` runs, and gives back the state it saved (issue 31: nothing documented it)."""
    monkeypatch.chdir(tmp_path)
    opt = optim.data_parallel(optim.adamw(1e-3), shard_state=True)
    params = {"w": np.ones((4, 3)), "b": np.zeros(3)}
    opt_state = opt.init(params)
    for _ in range(2):
        u, opt_state = opt.update(fnad.tree_map(np.ones_like, params), opt_state, params)
        params = optim.apply_updates(params, u)
    names = {"fnad": fnad, "dist": dist, "optim": optim, "params": params, "step": 2,
             "opt_state": opt_state}
    saved = opt_state
    exec(_docs_block("sharded-checkpoint-example"), names)
    assert names["step"] == 2
    assert fnad.tree_structure(names["opt_state"]) == fnad.tree_structure(saved)
    for a, b in zip(fnad.tree_leaves(names["opt_state"]), fnad.tree_leaves(saved)):
        np.testing.assert_array_equal(a, b)
    opt.update(fnad.tree_map(np.ones_like, params), names["opt_state"], names["params"])
    # without like= the state is tuples, which update refuses, naming the fix
    plain = fnad.load(tmp_path / "run.npz")
    with pytest.raises(TypeError, match="not a ShardedState.*like="):
        opt.update(fnad.tree_map(np.ones_like, params),
                   optim.scatter_state(plain["opt_state"], params), params)
