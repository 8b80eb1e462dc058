"""Violates: must work under jit and vmap; a Python if on the array value only works eagerly."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    if n == 0:
        return n, jnp.zeros_like(n)
    return n, jnp.dot(x, t) / n
