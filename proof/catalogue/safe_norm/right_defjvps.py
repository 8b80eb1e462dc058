"""Correct: defjvps with a per-argument tangent function (double where inside)."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.linalg.norm(x)


def _tangent(t, ans, x):
    nonzero = ans > 0
    return jnp.where(nonzero, jnp.vdot(x, t) / jnp.where(nonzero, ans, 1.0), 0.0)


safe_norm.defjvps(_tangent)
