"""Violates: the value under differentiation: the function body is stable, but the forward rule that jax.value_and_grad runs computes log(1 + eˣ) and overflows."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)  # 稳定


def _fwd(x):
    return jnp.log(1.0 + jnp.exp(x)), x  # 只在被求导时运行


def _bwd(x, g):
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
