"""Violates: implicit differentiation and the cheap backward pass; the FORWARD pass pushes one forward-mode tangent per input entry through the whole value iteration (jax.jvp through the while_loop, vmapped over n one-hot tangents: n times the iterations) and keeps the full Jacobian dV*/dθ (S·n numbers, within 8n for S ≤ 8) as the residual; the backward pass only contracts it with g, so only the forward pass does the expensive per-entry work."""


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _fixed_point(step, x0):
    def keep_going(state):
        x, x_prev, k = state
        return (jnp.max(jnp.abs(x - x_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(x)))) & (k < 20_000)

    def advance(state):
        x, _, k = state
        return step(x), x, k + 1

    return lax.while_loop(keep_going, advance, (step(x0), x0, 1))[0]


def _iterate(R, P, gamma):
    return _fixed_point(lambda V: _bellman(V, R, P, gamma), jnp.zeros(R.shape[0], R.dtype))


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _iterate(R, P, gamma)


def soft_values_fwd(R, P, gamma):
    sizes = (R.size, P.size, 1)

    def column(e):
        tR, tP, tg = e[: sizes[0]].reshape(R.shape), e[sizes[0] : sizes[0] + sizes[1]].reshape(P.shape), e[-1]
        return jax.jvp(_iterate, (R, P, gamma), (tR, tP, tg))[1]

    D = jax.vmap(column)(jnp.eye(sum(sizes), dtype=R.dtype))  # (n, S): dV*/dθ_k for every input entry
    return _iterate(R, P, gamma), (D, R.shape, P.shape)


def soft_values_bwd(res, g):
    D, shape_R, shape_P = res
    cols = D @ g
    nR = shape_R[0] * shape_R[1]
    return cols[:nR].reshape(shape_R), cols[nR:-1].reshape(shape_P), cols[-1]


soft_values.defvjp(soft_values_fwd, soft_values_bwd)
