"""Correct by the statement's tolerance (custom_jvp, which the statement allows): from softplus(x) = x + softplus(−x) the tangent rule is t − t·σ(−x) with σ(−x) = 1/(1 + eˣ); JAX transposes it into g − g/(1 + eˣ) = g·σ(x), within rtol 1e-5 + atol 1e-6·|g|."""


@jax.custom_jvp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


@softplus_prod.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # softplus(x) = x + softplus(-x)：切向量逐项求，t·1 - t·σ(-x)
    return jnp.logaddexp(x, 0.0), t - t / (1.0 + jnp.exp(x))
