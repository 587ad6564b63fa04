"""The main demo: ordinary NumPy-style code, transformed with mjcore (run by `make demo`)."""

import mjcore
import mjnp as np


def section(title: str) -> None:
    print(f"\n== {title} ==")


def f(x):
    y = np.sin(x) * 2.0
    return -y + x


def deriv(fun):
    return lambda x: mjcore.jvp(fun, (x,), (1.0,))[1]


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def main() -> None:
    section("NumPy semantics on device arrays")
    x = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    print("x            =", x)
    print("x * 2 + 1    =", x * 2 + 1, "dtype", (x * 2 + 1).dtype)
    print("np.sum(x**2) =", np.sum(x**2))

    section("Forward-mode derivatives (jvp)")
    print("f(3.)              =", f(3.0))
    print("deriv(f)(3.)       =", deriv(f)(3.0))
    print("deriv(deriv(f))(3.) =", deriv(deriv(f))(3.0), "(Autodidax: 0.2822400161197344)")

    section("Vectorisation (vmap)")
    print("vmap(lambda s: 1 + s)(arange(3.)) =", mjcore.vmap(lambda s: 1 + s)(np.arange(3.0)))
    pushfwd = lambda v: mjcore.jvp(np.sin, (np.arange(3.0),), (v,))[1]  # noqa: E731
    print("jacfwd(sin) via vmap(jvp):\n", mjcore.vmap(pushfwd)(np.eye(3)))

    section("Jaxprs")
    print(mjcore.make_jaxpr(lambda a, b: np.sum(a + np.sin(b) * 3.0))(np.zeros(8), np.ones(8)))

    section("jit: traced once, compiled by XLA")
    step = mjcore.jit(loss)
    w = np.ones((3, 2)) * 0.1
    xs = np.arange(12.0).reshape(4, 3) / 12
    ys = np.ones((4, 2))
    print("loss =", step(w, xs, ys), "| traced", step.trace_count, "time(s)")
    print("loss =", step(w * 2, xs, ys), "| traced", step.trace_count, "time(s)")
    print("jvp of the jitted loss along w:", mjcore.jvp(lambda w: step(w, xs, ys), (w,), (w,))[1])


if __name__ == "__main__":
    main()
