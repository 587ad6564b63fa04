"""JAX's `jax.experimental` names that real programs import (`shard_map`)."""

from mjcore.experimental import shard_map

__all__ = ["shard_map"]
