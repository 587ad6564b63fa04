"""Vectorised kernels that lower some elementwise primitives of `mjcore.lax.transcendental` on
large arrays, where XLA's CPU ops do not vectorise; see README.md here for their bounds."""
