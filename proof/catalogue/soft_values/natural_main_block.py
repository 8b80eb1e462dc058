"""Natural style: keyword defaults, an assert inside a helper, a __name__ == "__main__" demo block and a print of the iteration count (while_loop returns it)."""
import jax
import jax.numpy as jnp


def backup(V, R, P, gamma):
    """一次软贝尔曼备份。"""
    assert R.ndim == 2 and P.ndim == 3, "R 是 (S, A)，P 是 (S, A, S)"
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def iterate_with_count(R, P, gamma, *, tol=1e-7, max_steps=10_000):
    def cond(c):
        V, prev, count = c
        return (jnp.max(jnp.abs(V - prev)) > tol * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (count < max_steps)

    def body(c):
        V, _, count = c
        return backup(V, R, P, gamma), V, count + 1

    zeros = jnp.zeros(R.shape[0], R.dtype)
    V, _, count = jax.lax.while_loop(cond, body, (backup(zeros, R, P, gamma), zeros, 1))
    return V, count


@jax.custom_vjp
def soft_values(R, P, gamma):
    return iterate_with_count(R, P, gamma)[0]


def fwd(R, P, gamma):
    V, _ = iterate_with_count(R, P, gamma)
    return V, (V, R, P, gamma)


def bwd(res, g):
    V, R, P, gamma = res
    I_minus_J = jnp.eye(len(V)) - jax.jacfwd(backup)(V, R, P, gamma)
    v = jnp.linalg.solve(I_minus_J.T, g)
    return jax.vjp(lambda *params: backup(V, *params), R, P, gamma)[1](v)


soft_values.defvjp(fwd, bwd)

if __name__ == "__main__":
    R0 = jnp.array([[0.0, 1.0], [1.0, 0.0]])
    P0 = jnp.full((2, 2, 2), 0.5)
    V0, steps = iterate_with_count(R0, P0, 0.99)
    print(f"{int(steps)} 步收敛，V* = {V0}")
