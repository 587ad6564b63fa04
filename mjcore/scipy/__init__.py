"""JAX's `scipy` namespace: `mjcore.scipy.special`, special functions written in `mjcore.lax`;
`linalg` and `stats` (which sit above mjnp) load on first use."""

from mjcore.scipy import special

__all__ = ["linalg", "special", "stats"]


def __getattr__(name: str) -> object:
    if name in ("linalg", "stats"):
        import importlib

        return importlib.import_module(f"mjcore.scipy.{name}")
    raise AttributeError(f"module 'mjcore.scipy' has no attribute {name!r}")
