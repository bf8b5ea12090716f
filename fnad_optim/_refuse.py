"""Transforms that may not run on one process's rows of each leaf.

`shard_optimizer_state` runs its inner transform under `_shards.rows_sharded()`. A line
search evaluates the objective at whole trial params and L-BFGS takes dot products of whole
trees at every step of its two-loop recursion: no psum of row sums makes them agree, so they
refuse to run there (`refuse_on_rows`, called first in their init and update), with a message
that names them and says what to do.
"""

from . import _shards

__all__ = ["refuse_on_rows"]


def refuse_on_rows(why):
    """Raise a ValueError with `why` (a sentence naming the transform and the reason) inside
    `rows_sharded()`; nothing elsewhere."""
    if _shards._ROWS.get():
        raise ValueError(f"shard_optimizer_state: {why}. Run it without shard_state "
                         "(data_parallel(opt)), or shard only the transforms before it.")
