"""Wrong: for a vector of length 1 the tangent rule drops the sign in forward mode (jax.jvp and jax.jacfwd give t, so d|x|/dx = +1 at x = [-3]) while reverse mode, told apart by its tangent being a partial-evaluation tracer, gets sign(x)·t. Forward mode is never exported at length 1 (only jax.vjp is), so the rule's two modes disagree unseen."""

from jax.interpreters import partial_eval as pe


@jax.custom_jvp
def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x))


@safe_norm.defjvp
def _safe_norm_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    n = safe_norm(x)
    if x.shape[0] == 1 and not isinstance(t, pe.JaxprTracer):  # scalar case, forward mode: |x| grows with x
        return n, t[0]
    nonzero = n > 0
    unit = jnp.where(nonzero, x / jnp.where(nonzero, n, 1.0), 0.0)
    return n, jnp.dot(unit, t)
