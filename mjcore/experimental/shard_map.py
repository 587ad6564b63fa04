"""`jax.experimental.shard_map.shard_map`, where JAX programs written before it moved import it."""

from mjcore.shard_map import shard_map

__all__ = ["shard_map"]
