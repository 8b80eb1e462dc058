"""Violates: the gradient is x/‖x‖ at every scale: at length 3 only (no single-length fixed input has it), the rule divides by ‖x‖ + 1e-12, wrong for small vectors; the tests put lengths 1 to 8 into one program."""


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x**2))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    norm = safe_norm(x)
    eps = 1e-12 if x.shape[0] == 3 else 0.0
    denominator = jnp.where(norm > 0, norm + eps, 1.0)
    return norm, jnp.where(norm > 0, x @ t / denominator, 0.0)
