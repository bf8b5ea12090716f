"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py: 20 steps of data-parallel GPT
training (float64) against one-process training on the global batch, the same with the
AdamW moments sharded (ZeRO stage 1), a checkpoint written at step 10, and the resumption of
a checkpoint written by one process. Writes `result.json` and `final.npz` to argv[1]."""

import json
import sys
from pathlib import Path

import numpy as np

import fnad
import fnad.distributed as dist
import fnad_optim as optim
from tests.distributed import gpt_setup as g

out = Path(sys.argv[1])
w = dist.initialize()
i, n = w.index, w.count

ref_opt, dp_opt, z_opt = g.base_optimizer(), g.data_parallel_optimizer(), g.sharded_optimizer()
p_ref = p_dp = p_jit = p_z = g.init_params()
s_ref, s_dp, s_z = ref_opt.init(p_ref), dp_opt.init(p_dp), z_opt.init(p_z)
s_jit = s_dp
ref_step, dp_step, z_step = g.make_step(ref_opt), g.make_step(dp_opt), g.make_step(z_opt)
jit_step = fnad.jit(g.make_step(dp_opt))  # the data-parallel step staged, collectives too
errors, jit_errors, identical, zero_equal = [], [], True, True
for t in range(1, g.STEPS + 1):
    x, y = g.batch(t, shard=False)
    xl, yl = g.batch(t, shard=True)
    assert xl.shape[0] == g.GLOBAL_BATCH // n
    np.testing.assert_array_equal(np.concatenate(dist.all_gather(xl)), x)  # disjoint parts
    p_ref, s_ref, _ = ref_step(p_ref, s_ref, x, y)          # one process, the global batch
    p_dp, s_dp, _ = dp_step(p_dp, s_dp, xl, yl)            # each process, its half
    p_jit, s_jit, _ = jit_step(p_jit, s_jit, xl, yl)
    p_z, s_z, _ = z_step(p_z, s_z, xl, yl)
    errors.append(g.rel_err(p_dp, p_ref))
    jit_errors.append(g.rel_err(p_jit, p_ref))
    for leaf in fnad.tree_leaves([p_dp, p_jit, p_z]):  # bit-identical on every process
        both = dist.all_gather(leaf)
        identical &= bool(np.array_equal(both[0], both[1]))
    zero_equal &= all(np.array_equal(a, b) for a, b in
                      zip(fnad.tree_leaves(p_z), fnad.tree_leaves(p_dp)))
    if t == 10:
        dist.save(out / "zero10.npz", {"params": p_z, "step": t,
                                        "opt_state": optim.gather_state(s_z, p_z)})

memory = {"unsharded": g.state_bytes(s_dp), "sharded": g.state_bytes(s_z)}
per_process = [int(v) for v in dist.all_gather(np.int64(memory["sharded"]))]

# a checkpoint written by one process at step 10 (by the test), resumed here by two
resumed_err = None
one = out / "one10.npz"
if one.exists():
    like = {"params": g.init_params(), "step": 0,
            "opt_state": optim.gather_state(z_opt.init(g.init_params()), g.init_params())}
    st = fnad.load(one, like=like)
    p1, s1 = st["params"], optim.scatter_state(st["opt_state"], st["params"])
    p1, s1 = g.run_sharded(p1, s1, st["step"] + 1, g.STEPS, z_opt)
    resumed_err = g.rel_err(p1, p_z)

result = {"processes": n, "max_rel_err_dp_vs_one_process": max(errors), "errors": errors,
          "max_rel_err_jit_dp_vs_one_process": max(jit_errors),
          "bit_identical_across_processes": identical, "sharded_equals_unsharded": zero_equal,
          "optimizer_state_bytes": memory, "sharded_bytes_per_process": per_process,
          "resumed_from_one_process_rel_err": resumed_err}
dist.save(out / "final.npz", {"dp": p_dp, "jit": p_jit, "zero": p_z})
if i == 0:
    (out / "result.json").write_text(json.dumps(result, indent=1))
print(json.dumps({k: v for k, v in result.items() if k != "errors"}), flush=True)
