"""Which platform a lowering is for, as the kernels here need to know it."""

from __future__ import annotations

from mjcore.backend.custom_call import lowering_platform


def for_the_cpu() -> bool:
    """Whether programs are now lowered for the CPU. The kernels in this package exist because
    XLA's CPU code for their ops does not vectorise; on a GPU XLA's own ops are vectorised, and
    the periodic kernels' range guard (a run-time `cond`) would make each call wait for the
    device to hand the predicate to the host."""
    return lowering_platform() == "cpu"
