"""Staged control flow (Autodidax Part 5): cond, switch, while_loop, fori_loop and scan as
higher-order primitives holding closed jaxprs, with every transformation rule."""

from mjcore.control_flow.cond import cond, cond_p, switch
from mjcore.control_flow.fori_loop import fori_loop
from mjcore.control_flow.map import map
from mjcore.control_flow.scan import scan, scan_p
from mjcore.control_flow.while_loop import while_loop, while_p

__all__ = [
    "cond",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]
