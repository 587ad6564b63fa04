"""Benchmarks of mjnp against JAX and NumPy: `python -m benchmarks.run [--quick] [--only NAME]`.

`harness` measures (interleaved repetitions, medians, ratios), `workloads` is the registry of
what is measured, `frameworks` adapts each contender's namespace, `report` writes RESULTS.md and
the plot, and `profile_eager` breaks one eager mjcore op down layer by layer.
"""
