"""`mjcore.example_libraries`: JAX's small reference libraries, `optimizers` and `stax`, with
JAX's API, written over `mjnp` (they sit above it, like `mjcore.nn`)."""

from mjcore.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
