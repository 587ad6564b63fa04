"""JAX's `scipy` namespace: `mjcore.scipy.special`, special functions written in `mjcore.lax`."""

from mjcore.scipy import special

__all__ = ["special"]
