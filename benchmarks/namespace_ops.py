"""The eager namespace sweep (issue 18: "every mjnp function, not a chosen few, costs at most
~2x NumPy's time on small arrays"): one call each of ~100 NumPy functions beyond the 24 breadth
ops, on small float64/int64 arrays and an 8x8 matrix, written once against a NumPy-like `xp`.

Each op takes `(xp, d)`, with `d` the operands of `namespace_data` put on the framework's
device. Only mjnp and NumPy run them (the issue's measure is NumPy's time); JAX has the
breadth rows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Op = Callable[[Any, dict[str, Any]], Any]


def _ops() -> dict[str, tuple[str, Op]]:
    o: dict[str, tuple[str, Op]] = {}

    def add(name: str, text: str, fn: Op) -> None:
        o[name] = (text, fn)

    # elementwise
    add("abs", "abs(x)", lambda xp, d: xp.abs(d["x"]))
    add("sqrt", "sqrt(p)", lambda xp, d: xp.sqrt(d["p"]))
    add("log1p", "log1p(p)", lambda xp, d: xp.log1p(d["p"]))
    add("sin", "sin(x)", lambda xp, d: xp.sin(d["x"]))
    add("cosh", "cosh(x)", lambda xp, d: xp.cosh(d["x"]))
    add("exp2", "exp2(x)", lambda xp, d: xp.exp2(d["x"]))
    add("arctan2", "arctan2(x, y)", lambda xp, d: xp.arctan2(d["x"], d["y"]))
    add("hypot", "hypot(x, y)", lambda xp, d: xp.hypot(d["x"], d["y"]))
    add("power", "power(p, 1.5)", lambda xp, d: xp.power(d["p"], 1.5))
    add("square", "square(x)", lambda xp, d: xp.square(d["x"]))
    add("maximum", "maximum(x, y)", lambda xp, d: xp.maximum(d["x"], d["y"]))
    add("sign", "sign(x)", lambda xp, d: xp.sign(d["x"]))
    add("trunc", "trunc(x)", lambda xp, d: xp.trunc(d["x"]))
    add("round", "round(x, 2)", lambda xp, d: xp.round(d["x"], 2))
    add("fmod", "fmod(x, 0.7)", lambda xp, d: xp.fmod(d["x"], 0.7))
    add("floor_divide", "floor_divide(x, 0.7)", lambda xp, d: xp.floor_divide(d["x"], 0.7))
    add("remainder", "remainder(x, p)", lambda xp, d: xp.remainder(d["x"], d["p"]))
    add("logaddexp", "logaddexp(x, y)", lambda xp, d: xp.logaddexp(d["x"], d["y"]))
    add("isnan", "isnan(x)", lambda xp, d: xp.isnan(d["x"]))
    add("nan_to_num", "nan_to_num(x)", lambda xp, d: xp.nan_to_num(d["x"]))
    add(
        "logical_and",
        "logical_and(x > 0, y > 0)",
        lambda xp, d: xp.logical_and(d["x"] > 0, d["y"] > 0),
    )
    add("clip_arrays", "clip(x, -p, p)", lambda xp, d: xp.clip(d["x"], -d["p"], d["p"]))
    add("softplus", "log(1 + exp(x))", lambda xp, d: xp.log(1 + xp.exp(d["x"])))
    add("arith_chain", "x + 1.0 * y - x / 2", lambda xp, d: d["x"] + 1.0 * d["y"] - d["x"] / 2)
    add("outer_mul", "v[:, None] * v[None, :]", lambda xp, d: d["v"][:, None] * d["v"][None, :])
    # reductions and statistics
    add("mean", "x.mean()", lambda xp, d: d["x"].mean())
    add("min_plus_max", "x.min() + x.max()", lambda xp, d: d["x"].min() + d["x"].max())
    add("argmax", "argmax(x, axis=1)", lambda xp, d: xp.argmax(d["x"], axis=1))
    add("argmin", "argmin(x)", lambda xp, d: xp.argmin(d["x"]))
    add("std", "std(x, axis=0)", lambda xp, d: xp.std(d["x"], axis=0))
    add("var", "var(x)", lambda xp, d: xp.var(d["x"]))
    add("prod", "prod(p, axis=1)", lambda xp, d: xp.prod(d["p"], axis=1))
    add("any", "any(x > 2)", lambda xp, d: xp.any(d["x"] > 2))
    add("all", "all(x > -5)", lambda xp, d: xp.all(d["x"] > -5))
    add("cumprod", "cumprod(p, axis=1)", lambda xp, d: xp.cumprod(d["p"], axis=1))
    add("diff", "diff(x, axis=1)", lambda xp, d: xp.diff(d["x"], axis=1))
    add("count_nonzero", "count_nonzero(i)", lambda xp, d: xp.count_nonzero(d["i"]))
    add("nansum", "nansum(x)", lambda xp, d: xp.nansum(d["x"]))
    add("nanmean", "nanmean(x, axis=0)", lambda xp, d: xp.nanmean(d["x"], axis=0))
    add("median", "median(x, axis=1)", lambda xp, d: xp.median(d["x"], axis=1))
    add("percentile", "percentile(x, 90)", lambda xp, d: xp.percentile(d["x"], 90))
    add(
        "average",
        "average(x, axis=0, weights=w)",
        lambda xp, d: xp.average(d["x"], axis=0, weights=d["w"]),
    )
    add("histogram", "histogram(v, bins=10)", lambda xp, d: xp.histogram(d["v"], bins=10))
    add("bincount", "bincount(i.ravel())", lambda xp, d: xp.bincount(d["i"].ravel()))
    add("allclose", "allclose(x, y)", lambda xp, d: xp.allclose(d["x"], d["y"]))
    add("isclose", "isclose(x, y)", lambda xp, d: xp.isclose(d["x"], d["y"]))
    add("array_equal", "array_equal(x, x)", lambda xp, d: xp.array_equal(d["x"], d["x"]))
    # sorting, searching, sets
    add("sort", "sort(x, axis=1)", lambda xp, d: xp.sort(d["x"], axis=1))
    add("argsort", "argsort(x, axis=1)", lambda xp, d: xp.argsort(d["x"], axis=1))
    add("unique", "unique(i)", lambda xp, d: xp.unique(d["i"]))
    add("searchsorted", "searchsorted(sorted v, v)", lambda xp, d: xp.searchsorted(d["sv"], d["v"]))
    add("nonzero", "nonzero(i > 5)", lambda xp, d: xp.nonzero(d["i"] > 5))
    add("argwhere", "argwhere(i > 8)", lambda xp, d: xp.argwhere(d["i"] > 8))
    add("where_1arg", "where(x > 0)", lambda xp, d: xp.where(d["x"] > 0))
    # products
    add("einsum", "einsum('ij,kj->ik', x, y)", lambda xp, d: xp.einsum("ij,kj->ik", d["x"], d["y"]))
    add(
        "tensordot",
        "tensordot(x, y, ([1], [1]))",
        lambda xp, d: xp.tensordot(d["x"], d["y"], axes=([1], [1])),
    )
    add("matmul_vec", "matmul(x, v)", lambda xp, d: xp.matmul(d["x"], d["v"]))
    add("dot_method", "x.dot(y.T)", lambda xp, d: d["x"].dot(d["y"].T))
    add("inner", "inner(v, v)", lambda xp, d: xp.inner(d["v"], d["v"]))
    add("vdot", "vdot(v, v)", lambda xp, d: xp.vdot(d["v"], d["v"]))
    add("cross", "cross(x[:, :3], y[:, :3])", lambda xp, d: xp.cross(d["x"][:, :3], d["y"][:, :3]))
    add("kron", "kron(s3, s3)", lambda xp, d: xp.kron(d["s3"], d["s3"]))
    # linear algebra on an 8x8 matrix
    add("trace", "trace(s)", lambda xp, d: xp.trace(d["s"]))
    add("diag", "diag(s)", lambda xp, d: xp.diag(d["s"]))
    add("triu", "triu(s)", lambda xp, d: xp.triu(d["s"]))
    add("inv", "linalg.inv(s)", lambda xp, d: xp.linalg.inv(d["s"]))
    add("det", "linalg.det(s)", lambda xp, d: xp.linalg.det(d["s"]))
    add("solve", "linalg.solve(s, b)", lambda xp, d: xp.linalg.solve(d["s"], d["b"]))
    add("cholesky", "linalg.cholesky(spd)", lambda xp, d: xp.linalg.cholesky(d["spd"]))
    add("eigh", "linalg.eigh(sym)", lambda xp, d: xp.linalg.eigh(d["sym"]))
    add("svd", "linalg.svd(s)", lambda xp, d: xp.linalg.svd(d["s"]))
    add("qr", "linalg.qr(s)", lambda xp, d: xp.linalg.qr(d["s"]))
    add(
        "lstsq",
        "linalg.lstsq(x, x[:, 0])",
        lambda xp, d: xp.linalg.lstsq(d["x"], d["x"][:, 0], rcond=None),
    )
    add("norm", "linalg.norm(x)", lambda xp, d: xp.linalg.norm(d["x"]))
    add("norm_axis", "linalg.norm(x, axis=1)", lambda xp, d: xp.linalg.norm(d["x"], axis=1))
    add("fft", "fft.fft(v)", lambda xp, d: xp.fft.fft(d["v"]))
    add("rfft", "fft.rfft(x, axis=1)", lambda xp, d: xp.fft.rfft(d["x"], axis=1))
    # creation
    add("arange", "arange(100)", lambda xp, d: xp.arange(100))
    add("zeros", "zeros((40, 60))", lambda xp, d: xp.zeros((40, 60)))
    add("full", "full((40, 60), 2.0)", lambda xp, d: xp.full((40, 60), 2.0))
    add("ones_like", "ones_like(x)", lambda xp, d: xp.ones_like(d["x"]))
    add("eye", "eye(10)", lambda xp, d: xp.eye(10))
    add("linspace", "linspace(0, 1, 50)", lambda xp, d: xp.linspace(0, 1, 50))
    add("meshgrid", "meshgrid(v, v)", lambda xp, d: xp.meshgrid(d["v"], d["v"]))
    add("copy", "copy(x)", lambda xp, d: xp.copy(d["x"]))
    # manipulation and indexing
    add("take", "take(v, i)", lambda xp, d: xp.take(d["v"], d["i"]))
    add(
        "take_along_axis",
        "take_along_axis(x, i, axis=1)",
        lambda xp, d: xp.take_along_axis(d["x"], d["i"], axis=1),
    )
    add("repeat", "repeat(v, 2)", lambda xp, d: xp.repeat(d["v"], 2))
    add("tile", "tile(v, (3, 1))", lambda xp, d: xp.tile(d["v"], (3, 1)))
    add("pad", "pad(x, 1)", lambda xp, d: xp.pad(d["x"], 1))
    add("flip", "flip(x, 0)", lambda xp, d: xp.flip(d["x"], 0))
    add("swapaxes", "swapaxes(x, 0, 1)", lambda xp, d: xp.swapaxes(d["x"], 0, 1))
    add("ravel", "ravel(x)", lambda xp, d: xp.ravel(d["x"]))
    add("squeeze", "squeeze(x[None])", lambda xp, d: xp.squeeze(d["x"][None]))
    add("expand_dims", "expand_dims(x, 0)", lambda xp, d: xp.expand_dims(d["x"], 0))
    add("hstack", "hstack([x, y])", lambda xp, d: xp.hstack([d["x"], d["y"]]))
    add("vstack", "vstack([x, y])", lambda xp, d: xp.vstack([d["x"], d["y"]]))
    add("split", "split(x, 4, axis=1)", lambda xp, d: xp.split(d["x"], 4, axis=1))
    add("astype_int", "x.astype(int32)", lambda xp, d: d["x"].astype(xp.int32))
    add("reshape_method", "x.reshape(-1)", lambda xp, d: d["x"].reshape(-1))
    add("getitem_bool", "x[x > 1]", lambda xp, d: d["x"][d["x"] > 1])
    add("getitem_ellipsis", "x[..., 3]", lambda xp, d: d["x"][..., 3])
    add("getitem_reversed", "x[::-1]", lambda xp, d: d["x"][::-1])
    add("item", "x[3, 4].item()", lambda xp, d: d["x"][3, 4].item())
    add("float", "float(x[3, 4])", lambda xp, d: float(d["x"][3, 4]))
    add("tolist", "v.tolist()", lambda xp, d: d["v"].tolist())
    return o


NAMESPACE_OPS: dict[str, tuple[str, Op]] = _ops()


def namespace_data(put: Callable[[np.ndarray], Any]) -> dict[str, Any]:
    """The operands: x, y float64[40,60]; p positive float64[40,60]; v float64[60] (sv
    sorted); i int64[40,60] in [0, 10); w float64[40] weights; s an 8x8 well-conditioned
    matrix, b float64[8], spd/sym symmetric (positive definite) 8x8, s3 its 3x3 corner."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 60))
    s = rng.standard_normal((8, 8)) + 8 * np.eye(8)
    host = {
        "x": x,
        "y": rng.standard_normal((40, 60)),
        "p": rng.random((40, 60)) + 0.1,
        "v": rng.standard_normal(60),
        "i": rng.integers(0, 10, (40, 60)),
        "w": np.linspace(1.0, 2.0, 40),
        "s": s,
        "b": rng.standard_normal(8),
        "spd": s @ s.T,
        "sym": s + s.T,
        "s3": s[:3, :3].copy(),
    }
    host["sv"] = np.sort(host["v"])
    return {k: put(v) for k, v in host.items()}
