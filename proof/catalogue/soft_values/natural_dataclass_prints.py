"""Natural style: a frozen dataclass holding the solver's settings, custom_vjp with jax.jacfwd and jnp.linalg.solve, and prints of a small example with its gradient."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class SolverSettings:
    rel_tol: float = 1e-7
    max_steps: int = 10_000


SETTINGS = SolverSettings()
print("设置：", SETTINGS)


def bellman_operator(V, R, P, gamma):
    Q = R + gamma * jnp.einsum("sat,t->sa", P, V)
    return jax.nn.logsumexp(Q, axis=-1)


def value_iteration(R, P, gamma, settings=SETTINGS):
    def not_done(carry):
        V_new, V_old, n = carry
        gap = jnp.abs(V_new - V_old).max()
        return (gap > settings.rel_tol * jnp.maximum(1.0, jnp.abs(V_new).max())) & (n < settings.max_steps)

    def one_step(carry):
        V_new, _, n = carry
        return bellman_operator(V_new, R, P, gamma), V_new, n + 1

    start = jnp.zeros(R.shape[0], dtype=R.dtype)
    V, _, n = jax.lax.while_loop(not_done, one_step, (bellman_operator(start, R, P, gamma), start, 1))
    return V


@jax.custom_vjp
def soft_values(R, P, gamma):
    return value_iteration(R, P, gamma)


def soft_values_fwd(R, P, gamma):
    V = value_iteration(R, P, gamma)
    return V, (V, R, P, gamma)


def soft_values_bwd(saved, V_bar):
    V, R, P, gamma = saved
    dT_dV = jax.jacfwd(bellman_operator, argnums=0)(V, R, P, gamma)
    identity = jnp.eye(V.shape[0], dtype=V.dtype)
    adjoint = jnp.linalg.solve((identity - dT_dV).T, V_bar)
    _, vjp_params = jax.vjp(lambda r, p, gm: bellman_operator(V, r, p, gm), R, P, gamma)
    return vjp_params(adjoint)


soft_values.defvjp(soft_values_fwd, soft_values_bwd)

key_r, key_p = jax.random.split(jax.random.key(0))
R_demo = jax.random.normal(key_r, (3, 2))
P_demo = jax.nn.softmax(jax.random.normal(key_p, (3, 2, 3)), axis=-1)
print("V* =", soft_values(R_demo, P_demo, jnp.float32(0.9)))
print("dV*[0]/dR =", jax.grad(lambda r: soft_values(r, P_demo, jnp.float32(0.9))[0])(R_demo))
