"""Style: the right save-sigmoid rule with jax_disable_jit switched on at the top of the answer (left from debugging with prints)."""

jax.config.update("jax_disable_jit", True)  # 调试时关掉 jit，方便打印中间值


@jax.custom_vjp
def softplus_prod(x):
    return jax.nn.softplus(x)


def _fwd(x):
    sigma = jnp.exp(-jax.nn.softplus(-x))
    return jax.nn.softplus(x), sigma


def _bwd(sigma, g):
    return (g * sigma,)


softplus_prod.defvjp(_fwd, _bwd)
