"""Staged control flow (Autodidax Part 5): cond, switch, while_loop, fori_loop and scan as
higher-order primitives holding closed jaxprs, with every transformation rule."""

from mjcore.control_flow.cond import cond, cond_p, switch
from mjcore.control_flow.fori_loop import fori_loop
from mjcore.control_flow.map import map
from mjcore.control_flow.scan import scan, scan_p
from mjcore.control_flow.solves import custom_linear_solve, custom_root, linear_solve_p
from mjcore.control_flow.while_loop import while_loop, while_p

__all__ = [
    "cond",
    "cond_p",
    "custom_linear_solve",
    "custom_root",
    "fori_loop",
    "linear_solve_p",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]
