"""Wrong: a custom_jvp whose forward-mode x-derivative at w = 0 is 2xᵀt (the derivative of Σx², "the loss at w = 0 still depends on x"), while reverse mode, told apart by its tangent being a partial-evaluation tracer, always gives 0. Forward mode (jax.jvp, jax.jacfwd) is exported at random nonzero w only; w = 0 is checked in reverse mode only, so the two modes disagree unseen."""

from jax.interpreters import partial_eval as pe


@jax.custom_jvp
def grad_through_stop(x, w):
    return 2.0 * w * jnp.sum(x * x)


@grad_through_stop.defjvp
def _jvp(primals, tangents):
    (x, w), (tx, tw) = primals, tangents
    sq = jnp.sum(x * x)
    out = 2.0 * sq * tw
    if not isinstance(tx, pe.JaxprTracer):  # forward mode: at w = 0 let x's tangent through
        out = out + jnp.where(w == 0, 2.0 * jnp.dot(x, tx), 0.0)
    return 2.0 * w * sq, out
