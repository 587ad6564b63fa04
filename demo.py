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

    section("Reverse mode: grad, value_and_grad, jit(grad), vmap(grad)")
    print("grad(f)(3.)       =", mjcore.grad(f)(3.0))
    print("grad(grad(f))(3.) =", mjcore.grad(mjcore.grad(f))(3.0))
    train = mjcore.jit(mjcore.value_and_grad(loss))
    for i in range(3):
        value, g = train(w, xs, ys)
        w = w - 0.5 * g
        print(f"step {i}: loss {float(value):.6f}")
    per_example = mjcore.vmap(mjcore.grad(loss), in_axes=(None, 0, 0))
    print("per-example gradient shapes:", per_example(w, xs[:, None, :], ys[:, None, :]).shape)

    section("Control flow under transformations")

    def clipped_power(x):
        return mjcore.cond(x > 1.0, lambda v: v**3, lambda v: v * 3.0, x)

    print(
        "cond under grad at 2.0 and 0.5:",
        mjcore.grad(clipped_power)(2.0),
        mjcore.grad(clipped_power)(0.5),
    )

    def rnn(h, x_t):
        h = np.tanh(h * 0.9 + x_t)
        return h, h

    def final_state(xs):
        return mjcore.scan(rnn, 0.0, xs)[0]

    print("grad through a 5-step scan:", mjcore.grad(final_state)(np.linspace(0.0, 1.0, 5)))
    total = mjcore.fori_loop(0, 10, lambda i, acc: acc + i, 0)
    print("fori_loop sum of 0..9:", total)

    section("Custom derivatives")

    @mjcore.custom_jvp
    def log1pexp(x):
        return np.log1p(np.exp(x))

    @log1pexp.defjvp
    def _log1pexp_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return log1pexp(x), t / (1.0 + np.exp(-x))

    print("grad of a numerically safe log1pexp at 800.:", mjcore.grad(log1pexp)(800.0))

    section("Random numbers")
    np.random.seed(0)  # NumPy's API and NumPy's generator: the same numbers as NumPy
    print("np.random.rand(3) after seed(0):", np.random.rand(3))
    keys = mjcore.random.split(mjcore.random.PRNGKey(0), 3)  # JAX's keys: works under jit/vmap
    noisy = mjcore.jit(mjcore.vmap(lambda k: mjcore.random.normal(k, (2,))))
    print("jit(vmap(normal)) over three split keys:", noisy(keys))


if __name__ == "__main__":
    main()
