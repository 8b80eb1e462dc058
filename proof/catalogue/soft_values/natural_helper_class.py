"""Natural style: a helper class with type hints (jax.Array) whose methods build the operator, the solver and the rule; the custom_vjp's residuals in a NamedTuple."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import Array


class Saved(NamedTuple):
    V: Array
    R: Array
    P: Array
    gamma: Array


class SoftBellman:
    """软贝尔曼方程 V = T(V) 的求解器和它的隐式梯度。"""

    def __init__(self, tol: float = 1e-7, max_iter: int = 10_000) -> None:
        self.tol = tol
        self.max_iter = max_iter

    @staticmethod
    def T(V: Array, R: Array, P: Array, gamma: Array) -> Array:
        return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)

    def solve(self, R: Array, P: Array, gamma: Array) -> Array:
        def cond(c: tuple) -> Array:
            V, V_prev, i = c
            scale = jnp.maximum(1.0, jnp.max(jnp.abs(V)))
            return (jnp.max(jnp.abs(V - V_prev)) > self.tol * scale) & (i < self.max_iter)

        def body(c: tuple) -> tuple:
            V, _, i = c
            return self.T(V, R, P, gamma), V, i + 1

        V0 = jnp.zeros(R.shape[0], R.dtype)
        return jax.lax.while_loop(cond, body, (self.T(V0, R, P, gamma), V0, 1))[0]

    def backward(self, saved: Saved, g: Array) -> tuple[Array, Array, Array]:
        J = jax.jacfwd(self.T)(saved.V, saved.R, saved.P, saved.gamma)
        v = jnp.linalg.solve(jnp.eye(J.shape[0]) - J.T, g)
        pull = jax.vjp(lambda R, P, gamma: self.T(saved.V, R, P, gamma), saved.R, saved.P, saved.gamma)[1]
        return pull(v)


_solver = SoftBellman()


@jax.custom_vjp
def soft_values(R: Array, P: Array, gamma: Array) -> Array:
    return _solver.solve(R, P, gamma)


def _forward(R: Array, P: Array, gamma: Array) -> tuple[Array, Saved]:
    V = _solver.solve(R, P, gamma)
    return V, Saved(V, R, P, gamma)


soft_values.defvjp(_forward, _solver.backward)
