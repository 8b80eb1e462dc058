"""Correct (float64 residual): turns on jax_enable_x64; the forward rule computes sigma(x) in float64 and saves it, the backward rule multiplies and casts to float32; value and gradient are float32."""
jax.config.update("jax_enable_x64", True)


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    sigma = jax.nn.sigmoid(jnp.asarray(x, jnp.float64))  # 多保留几位，反向只做乘法
    return jnp.logaddexp(x, 0.0), sigma


def _bwd(sigma, g):
    return ((g * sigma).astype(jnp.float32),)


softplus_prod.defvjp(_fwd, _bwd)
