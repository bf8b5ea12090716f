"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py: decisions that read every leaf
are the same on every process around a sharded (ZeRO-1) optimizer (issue 31: each process
checked only its own rows, so one skipped a step another applied). Prints `ok <check>`."""

import numpy as np

import fnad
import fnad.distributed as dist
import fnad_optim as optim

w = dist.initialize()
i, n = w.index, w.count
assert n == 2, n


def ok(name):
    print(f"ok {name} (process {i})", flush=True)


def same_everywhere(tree, what):
    for leaf in fnad.tree_leaves(tree):
        both = dist.all_gather(np.asarray(leaf))
        assert np.array_equal(both[0], both[1], equal_nan=True), (what, both)


def close(a, b, what):
    for x, y in zip(fnad.tree_leaves(a), fnad.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-12, atol=1e-15,
                                   err_msg=what)


rng = np.random.default_rng(0)  # the same on every process
params = {"w": rng.normal(size=(4, 3)), "b": rng.normal(size=3), "s": np.asarray(0.5)}
grads = fnad.tree_map(lambda p: rng.normal(size=np.shape(p)), params)
bad = fnad.tree_map(np.copy, grads)
bad["w"][3, 1] = np.nan  # in process 1's rows only (rows 2 and 3 of 4)


def step(opt, g, steps=3):
    p, st = params, opt.init(params)
    for _ in range(steps):
        u, st = opt.update(g, st, p)
        p = optim.apply_updates(p, u)
    return p, st


# the guard inside the sharded optimizer: the whole step is skipped on both processes
for inner in (optim.apply_if_finite(optim.adam(0.1)),
              optim.apply_if_finite(optim.adam(0.1), max_consecutive_errors=1)):
    p_shard, st = step(optim.shard_optimizer_state(inner), bad)
    p_whole, st_whole = step(inner, bad)  # one process's view: the whole gradient
    same_everywhere(p_shard, "params after guarded sharded steps")
    same_everywhere(st.inner_state.notfinite_count, "skip counts")
    close(p_shard, p_whole, "sharded guard against the unsharded one")
    assert int(st.inner_state.total_notfinite) == int(st_whole.total_notfinite)
ok("apply_if_finite inside shard_optimizer_state skips or applies on every process alike")

# the guard outside data_parallel, on each process's own gradient: NaN on process 1 only
mine = bad if i == 1 else grads
guarded = optim.apply_if_finite(optim.data_parallel(optim.adam(0.1), shard_state=True))
p_out, st = step(guarded, mine)
same_everywhere(p_out, "params after a NaN on one process")
close(p_out, params, "a step with a NaN on any process is skipped")
assert int(st.total_notfinite) == 3, st.total_notfinite
ok("apply_if_finite outside data_parallel agrees on the finite check")

# whole-tree and whole-leaf norms inside the sharded optimizer: as without sharding
for name, inner in [("clip_by_global_norm", optim.chain(optim.clip_by_global_norm(0.5),
                                                        optim.sgd(0.1))),
                    ("lamb", optim.lamb(0.01))]:
    p_shard, _ = step(optim.shard_optimizer_state(inner), grads)
    p_whole, _ = step(inner, grads)
    same_everywhere(p_shard, name)
    close(p_shard, p_whole, f"sharded {name} against the unsharded one")
    ok(f"{name} inside shard_optimizer_state reads the whole leaves")

z = optim.shard_optimizer_state(optim.chain(optim.zero_nans(), optim.sgd(0.1)))
_, st = step(z, bad, steps=1)
assert bool(st.inner_state[0].found_nan["w"]) and not bool(st.inner_state[0].found_nan["b"])
ok("zero_nans inside shard_optimizer_state records a NaN in any process's rows")
print(f"done (process {i})", flush=True)
