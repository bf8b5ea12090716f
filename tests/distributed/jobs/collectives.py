"""Run under `mpiexec -n 2` by tests/distributed/test_mpi.py: every collective's values,
dtypes, buckets, derivatives (SPMD), batching and staging, the host-staging transport, and
the mismatch errors. Prints `ok <check>` lines; any failure is an uncaught exception,
which ends the job (fnad.distributed's abort) with a nonzero exit."""

import numpy as np

import fnad
import fnad.distributed as dist
import fnad.numpy as fnp
from fnad.distributed._transport import HostStagingTransport, MPITransport

w = dist.initialize()
i, n = w.index, w.count
assert n == 2, n
rng = np.random.default_rng(100 + i)  # different data on each process
same = np.random.default_rng(7)       # the same on every process


def ok(name):
    print(f"ok {name} (process {i})", flush=True)


def eq(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (what, a.dtype, a.shape, b.dtype, b.shape)
    assert np.array_equal(a, b), (what, a, b)


def every(x):
    """[process 0's x, process 1's x] (from all_gather, itself checked below)."""
    return list(dist.all_gather(x))


# ----------------------------------------------------------------------------- values
tree = {"i32": np.arange(5, dtype=np.int32) * (i + 1), "i8": np.full(3, i + 1, np.int8),
        "f64": rng.normal(size=(3, 4)), "f32": rng.normal(size=7).astype(np.float32),
        "f16": np.array([0.5, 1.25], np.float16) * (i + 1), "c128": rng.normal(size=2) * 1j,
        "scalar": 2.5 * i, "nested": [np.array(i, np.int64), (np.ones((2, 0)),)]}
gathered = dist.all_gather(tree)
eq(gathered["i32"], np.stack([np.arange(5, dtype=np.int32), 2 * np.arange(5, dtype=np.int32)]),
   "all_gather int32")
for bb in (None, 64, 1):  # one bucket per dtype, several leaves a bucket, a bucket per leaf
    s = dist.psum(tree, bucket_bytes=bb)
    for path, leaf in zip(["c128", "f16", "f32", "f64", "i32", "i8"],
                          [s[k] for k in ["c128", "f16", "f32", "f64", "i32", "i8"]]):
        both = gathered[path]
        want = (both[0].astype(np.float32) + both[1]).astype(np.float16) if path == "f16" \
            else both[0] + both[1]
        eq(leaf, want, f"psum {path} bucket_bytes={bb}")
    eq(s["scalar"], np.asarray(2.5), "psum scalar")
    eq(s["nested"][0], np.asarray(1, np.int64), "psum nested")
    assert s["nested"][1][0].shape == (2, 0)
    rows = every(s["f64"])  # the sum is the same, bit for bit, on every process
    eq(rows[0], rows[1], "psum identical on every process")
ok("psum of int8, int32, float16, float32, float64, complex, scalars, empty; 3 bucket sizes")

m = dist.pmean({"f": np.ones(3, np.float32) * (i + 1), "k": np.array([i, 3])})
eq(m["f"], np.full(3, 1.5, np.float32), "pmean float32")
eq(m["k"], np.array([0.5, 3.0]), "pmean int -> float")
ok("pmean keeps float dtypes")

x = np.arange(6).reshape(2, 3) + 10 * i
eq(dist.all_gather(x, axis=1), np.stack([x - 10 * i, x - 10 * i + 10], axis=1), "axis=1")
eq(dist.all_gather(x, axis=-1), np.stack([x - 10 * i, x - 10 * i + 10], axis=-1), "axis=-1")
eq(dist.all_gather(x, tiled=True), np.concatenate([x - 10 * i, x - 10 * i + 10]), "tiled 0")
eq(dist.all_gather(x, axis=1, tiled=True),
   np.concatenate([x - 10 * i, x - 10 * i + 10], axis=1), "tiled 1")
flags = dist.all_gather({"b": np.array([i == 0, True]), "u": np.uint16(7 + i)}, bucket_bytes=8)
eq(flags["b"], np.array([[True, True], [False, True]]), "all_gather bool")
eq(flags["u"], np.array([7, 8], np.uint16), "all_gather uint16 0-d")
ok("all_gather: axes, tiled, bool, 0-d, buckets")

full = same.normal(size=(2, 4, 3))  # psum_scatter of (process-scaled) copies
mine = dist.psum_scatter(full * (i + 1), scatter_dimension=0)
eq(mine, (full * 1 + full * 2)[i], "psum_scatter untiled")
mine = dist.psum_scatter(full * (i + 1), scatter_dimension=1, tiled=True)
eq(mine, (full * 1 + full * 2)[:, 2 * i:2 * i + 2], "psum_scatter tiled axis 1")
parts = dist.psum_scatter([np.arange(4, dtype=np.int32) * (i + 1), full], tiled=True,
                          bucket_bytes=16)
eq(parts[0], (np.arange(4, dtype=np.int32) * 3)[2 * i:2 * i + 2], "psum_scatter int32")
eq(parts[1], (full + full)[i:i + 1], "psum_scatter tree")
ok("psum_scatter: untiled, tiled, trees, dtypes")

b = dist.broadcast({"p": np.arange(3) * (i + 5), "q": np.array([i == 1]), "r": 1.0 * i},
                   root=1, bucket_bytes=8)
eq(b["p"], np.arange(3) * 6, "broadcast p")
eq(b["q"], np.array([True]), "broadcast bool")
eq(b["r"], np.asarray(1.0), "broadcast scalar")
r0 = dist.broadcast(np.full(4, float(i)))
eq(r0, np.zeros(4), "broadcast root 0")
ok("broadcast from root 0 and 1, all dtypes")

dist.barrier()
ok("barrier")


# ----------------------------------------------------------------------------- derivatives
def total(f, x):
    """Sum over processes of f(x) (each process passing its own x)."""
    return float(dist.psum(np.asarray(f(x))))


def check_spmd(name, f, x):
    """f: a per-process loss of this process's x, through collectives. The SPMD gradient on
    each process is d(sum_p f_p)/dx_mine; check grad and jvp against central differences of
    the summed loss, and the Hessian-vector product against differences of the gradient."""
    v = rng.normal(size=x.shape)
    eps = 1e-6
    fd = (total(f, x + eps * v) - total(f, x - eps * v)) / (2 * eps)
    g = fnad.grad(f)(x)
    rev = float(dist.psum(np.vdot(g, v)))
    fwd = float(dist.psum(np.asarray(fnad.jvp(f, (x,), (v,))[1])))
    assert abs(rev - fd) <= 1e-7 * max(1, abs(fd)), (name, "grad", rev, fd)
    assert abs(fwd - fd) <= 1e-7 * max(1, abs(fd)), (name, "jvp", fwd, fd)
    hvp = fnad.jvp(fnad.grad(f), (x,), (v,))[1]
    fd_h = (fnad.grad(f)(x + eps * v) - fnad.grad(f)(x - eps * v)) / (2 * eps)
    assert np.allclose(hvp, fd_h, rtol=1e-6, atol=1e-7), (name, "hvp", hvp, fd_h)
    ok(f"SPMD grad, jvp and Hessian-vector product of {name}")


c = rng.normal(size=(2, 3))  # a different weighting on each process
check_spmd("psum", lambda x: fnp.sum(c * fnp.sin(dist.psum(x))), rng.normal(size=(2, 3)))
check_spmd("pmean", lambda x: fnp.sum(c * fnp.sin(dist.pmean(x)) ** 2), rng.normal(size=(2, 3)))
cg = rng.normal(size=(2, 2, 3))
check_spmd("all_gather", lambda x: fnp.sum(cg * fnp.tanh(dist.all_gather(x))),
           rng.normal(size=(2, 3)))
check_spmd("all_gather tiled axis 1",
           lambda x: fnp.sum(c.repeat(2, 1) * fnp.sin(dist.all_gather(x, 1, tiled=True))),
           rng.normal(size=(2, 3)))
check_spmd("psum_scatter", lambda x: fnp.sum(c[0] * fnp.sin(dist.psum_scatter(x))),
           rng.normal(size=(2, 3)))
check_spmd("psum_scatter tiled", lambda x: fnp.sum(c * fnp.cos(dist.psum_scatter(x, tiled=True))),
           rng.normal(size=(4, 3)))
check_spmd("broadcast", lambda x: fnp.sum(c * fnp.sin(dist.broadcast(x, root=1)) ** 3),
           rng.normal(size=(2, 3)))
# the VJP of psum is psum: on each process the cotangent sums over processes
eq(fnad.grad(lambda x: fnp.sum(dist.psum(x)))(np.ones(3)), np.full(3, 2.0), "grad of psum")
# a tree with an integer leaf: only the float leaves are differentiated
g = fnad.grad(lambda w, k: fnp.sum(dist.psum({"w": w, "k": k})["w"] ** 2 * k))(
    np.ones(2), np.arange(2, dtype=np.int32))
eq(g, np.array([0.0, 8.0]), "grad through a tree psum with an int leaf")


# ----------------------------------------------------------------------------- vmap, jit
X = rng.normal(size=(5, 4))
eq(fnad.vmap(dist.psum)(X), dist.psum(X), "vmap psum")
eq(fnad.vmap(lambda x: dist.all_gather(x))(X), np.moveaxis(dist.all_gather(X), 0, 1),
   "vmap all_gather")
eq(fnad.vmap(lambda x: dist.all_gather(x, tiled=True), in_axes=1)(X),
   dist.all_gather(X, axis=0, tiled=True).T, "vmap all_gather in_axes=1")
eq(fnad.vmap(lambda x: dist.psum_scatter(x, tiled=True))(X),
   dist.psum_scatter(X, 1, tiled=True), "vmap psum_scatter")
eq(fnad.vmap(lambda x: dist.broadcast(x, root=1))(X), dist.broadcast(X, root=1), "vmap bcast")
ok("vmap of every collective")

f = fnad.jit(lambda x: dist.psum(x) * 2)
graph = fnad.make_graph(lambda x: dist.psum(x))(X)
assert [e.prim.name for e in graph.eqns] == ["psum"], graph
for _ in range(2):
    eq(f(X), dist.psum(X) * 2, "jit psum")
jg = fnad.jit(fnad.grad(lambda x: fnp.sum(fnp.sin(dist.all_gather(x)) * cg)))
eq(jg(X[:2, :3]), fnad.grad(lambda x: fnp.sum(fnp.sin(dist.all_gather(x)) * cg))(X[:2, :3]),
   "jit(grad(all_gather))")
ok("jit stages psum as one equation; jit(grad) of all_gather")


# ----------------------------------------------------------------------------- host staging
saved = w.transports.get("cpu")
w.transports["cpu"] = HostStagingTransport(MPITransport(w), lambda a: np.array(a, copy=True),
                                           np.copyto)
eq(dist.psum(tree)["f64"], gathered["f64"][0] + gathered["f64"][1], "host psum")
eq(dist.all_gather(x, tiled=True), np.concatenate([x - 10 * i, x - 10 * i + 10]), "host gather")
eq(dist.broadcast(np.full(3, i), root=1), np.full(3, 1), "host broadcast")
eq(dist.psum_scatter(full * (i + 1)), (full * 3)[i], "host psum_scatter")
w.transports["cpu"] = saved
ok("host-staging transport (the CuPy fallback) on NumPy copies")


# ----------------------------------------------------------------------------- mismatches
def mismatch(call, *needles):
    try:
        call()
    except dist.CollectiveMismatchError as e:
        text = str(e)
        for s in needles:
            assert s in text, (s, text)
        dist.barrier()  # the world still works afterwards
        return text
    raise AssertionError(f"no CollectiveMismatchError for {needles}")


mismatch(lambda: dist.psum(np.ones(3 + i)), "process 0 passes (root): float64[3]",
         "process 1 passes (root): float64[4]", "no data was moved")
mismatch(lambda: dist.psum({"w": np.ones(2, [np.float64, np.float32][i])}),
         "['w']: float64[2]", "['w']: float32[2]")
mismatch(lambda: dist.psum({"a": np.ones(2)} if i == 0 else {"b": np.ones(2)}),
         "of PyTreeDef({'a': *})", "of PyTreeDef({'b': *})")
mismatch(lambda: dist.psum(np.ones(2)) if i == 0 else dist.all_gather(np.ones(2)),
         "psum(", "all_gather(axes=(0,)")
mismatch(lambda: dist.broadcast(np.ones(2), root=i), "root=0", "root=1")
ok("mismatched shapes, dtypes, structures, collectives and roots raise on every process")
mismatch(lambda: dist.barrier() if i == 0 else dist.psum(np.ones(2)), "barrier()",
         "psum(bucket_bytes=")
ok("a barrier against a psum is caught")
# settings that change what goes over the wire are agreed too (issue 31: a bucket size on
# one process only gave the other a wrong sum, then a hang)
tree = {"a": np.ones(3), "b": np.ones(4)}
mismatch(lambda: dist.psum(tree, bucket_bytes=8 if i == 0 else None), "bucket_bytes=8",
         "bucket_bytes=33554432")
mismatch(lambda: dist.all_gather(tree, bucket_bytes=64 if i == 1 else 128), "bucket_bytes=64",
         "bucket_bytes=128")
ok("a bucket size that differs between processes raises on every process")
print(f"done (process {i})", flush=True)
