"""Violates: the value ‖x‖₂ for any length: a length-1 vector takes the shortcut ‖x‖ = x[0] (the abs forgotten), so safe_norm([-3.0]) = -3 and its gradient is 1 instead of -1."""


@jax.custom_jvp
def safe_norm(x):
    if x.shape[0] == 1:  # 一个分量的向量，范数就是这个分量
        return x[0]
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    if x.shape[0] == 1:
        return x[0], t[0]
    n = safe_norm(x)
    nonzero = n > 0
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
