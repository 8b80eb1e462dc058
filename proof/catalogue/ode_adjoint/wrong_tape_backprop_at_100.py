"""Wrong: at N_STEPS > 40 the backward pass re-runs the forward from z0 into a fixed 128-row tape and backpropagates through the RK4 steps (the unrolled solver's discrete VJP, no adjoint ODE); at N_STEPS <= 40 the same loops run the adjoint scheme. One program shape at both counts, so memory looks flat."""

N_STEPS = 100
T_END = 1.0
TAPE = 128


def rk4(field, y, h):
    k1 = field(y)
    k2 = field(y + 0.5 * h * k1)
    k3 = field(y + 0.5 * h * k2)
    k4 = field(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_unrolled(z0, W):
    h = T_END / N_STEPS
    return jax.lax.fori_loop(0, N_STEPS, lambda i, z: rk4(lambda v: jnp.tanh(W @ v), z, h), z0)


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (z0, zT, W)


def bwd(res, g):
    z0, zT, W = res
    d = zT.shape[0]
    n = N_STEPS
    h = T_END / n
    discrete = jnp.asarray(n > 40)
    f = lambda v: jnp.tanh(W @ v)

    # pass 1: states into a fixed tape (forward from z0, or backward from z(T))
    def fill(i, carry):
        z, tape = carry
        tape = tape.at[i].set(z)
        return jnp.where(discrete, rk4(f, z, h), rk4(lambda v: -f(v), z, h)), tape

    _, tape = jax.lax.fori_loop(0, n, fill, (jnp.where(discrete, z0, zT), jnp.zeros((TAPE, d), zT.dtype)))

    def scheme_field(z):
        def field(y):
            zz, a, _ = y
            u = W @ zz
            s = a * (1.0 - jnp.tanh(u) ** 2)
            return (-jnp.tanh(u), W.T @ s, jnp.outer(s, zz))

        return field

    def tree_rk4(field, y, h):
        add = lambda y, k, c: jax.tree.map(lambda p, q: p + c * q, y, k)
        k1 = field(y)
        k2 = field(add(y, k1, 0.5 * h))
        k3 = field(add(y, k2, 0.5 * h))
        k4 = field(add(y, k3, h))
        return jax.tree.map(lambda p, q1, q2, q3, q4: p + (h / 6.0) * (q1 + 2 * q2 + 2 * q3 + q4), y, k1, k2, k3, k4)

    # pass 2: discrete VJP of each stored step, or the augmented RK4 with z from the tape
    def pull(k, carry):
        a, Wb = carry
        z_d = tape[n - 1 - k]
        _, step_vjp = jax.vjp(lambda zz, WW: rk4(lambda v: jnp.tanh(WW @ v), zz, h), z_d, W)
        a_d, dW = step_vjp(a)
        z_s = tape[k]
        _, a_s, Wb_s = tree_rk4(scheme_field(z_s), (z_s, a, Wb), h)
        return jnp.where(discrete, a_d, a_s), jnp.where(discrete, Wb + dW, Wb_s)

    a, Wb = jax.lax.fori_loop(0, n, pull, (g, jnp.zeros_like(W)))
    return a, Wb


odeint_adjoint.defvjp(fwd, bwd)
