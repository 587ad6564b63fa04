"""NumPy's exceptions and warnings, as `numpy.exceptions`: mjnp raises these very classes.

`mjnp.exceptions.AxisError is numpy.exceptions.AxisError`, so `except np.exceptions.AxisError`
catches mjnp's errors whichever of the two modules `np` names.
"""

from numpy.exceptions import (
    AxisError,
    ComplexWarning,
    DTypePromotionError,
    ModuleDeprecationWarning,
    RankWarning,
    TooHardError,
    VisibleDeprecationWarning,
)

__all__ = [
    "AxisError",
    "ComplexWarning",
    "DTypePromotionError",
    "ModuleDeprecationWarning",
    "RankWarning",
    "TooHardError",
    "VisibleDeprecationWarning",
]
