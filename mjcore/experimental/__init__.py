"""JAX's `jax.experimental` names that real programs import (`shard_map`)."""
