"""Method: an overflow-safe norm (LAPACK nrm2's idea): the primal scales by m = max|xᵢ| before squaring, ‖x‖ = m·‖x/m‖ (0 when m = 0); the rule's direction is x/‖x‖ behind a double where, the JVP a jnp.vdot."""


def _scaled_norm(x):
    m = jnp.max(jnp.abs(x))
    safe_m = jnp.where(m > 0, m, 1.0)
    return jnp.where(m > 0, m * jnp.sqrt(jnp.sum(jnp.square(x / safe_m))), 0.0)


@jax.custom_jvp
def safe_norm(x):
    return _scaled_norm(x)


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = _scaled_norm(x)
    nonzero = n > 0
    unit = jnp.where(nonzero, (x / jnp.where(nonzero, n, 1.0)), jnp.zeros_like(x))
    return n, jnp.vdot(unit, t)
