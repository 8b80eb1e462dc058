"""Violates: the gradient and the JVP x/‖x‖ at every scale: the rule divides by ‖x‖ + 1e-12, right for ordinary vectors and at 0, wrong for small ones."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    return n, jnp.dot(x, t) / (n + 1e-12)
