"""Violates: gradient must be sigma(x) on the whole interval: the bwd multiplies g in, but takes sigma(x) = 1 for x > 4."""
# hint: test_visible_values: 梯度应为 σ(x)
# hint: test_visible_jit_vmap: jit+vmap 下的梯度不对
# hint: test_hidden_gradient: 不要用只在某一段近似成立的式子


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    sigma = jnp.where(x > 4.0, 1.0, jax.nn.sigmoid(x))  # "σ is 1 out there": off by up to 0.018
    return (g * sigma,)


softplus_prod.defvjp(_fwd, _bwd)
