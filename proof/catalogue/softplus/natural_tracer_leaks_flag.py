"""Style: jax_check_tracer_leaks switched on at the top of the answer (a debugging flag the JAX docs suggest for leaked-tracer errors); otherwise the right save-sigmoid rule."""

jax.config.update("jax_check_tracer_leaks", True)  # 排查 tracer 泄漏时打开的


@jax.custom_vjp
def softplus_prod(x):
    return jax.nn.softplus(x)


def _fwd(x):
    sigma = jnp.exp(-jax.nn.softplus(-x))
    return jax.nn.softplus(x), sigma


def _bwd(sigma, g):
    return (g * sigma,)


softplus_prod.defvjp(_fwd, _bwd)
