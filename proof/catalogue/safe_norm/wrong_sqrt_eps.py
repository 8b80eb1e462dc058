"""Violates: the primal must be ||x|| (exactly 0 at x = 0); sqrt(sum(x^2) + eps) is off by sqrt(eps)."""

EPS = 1e-12


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x) + EPS)


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    return n, jnp.dot(x, t) / n
