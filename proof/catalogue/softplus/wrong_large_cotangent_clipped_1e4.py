"""Violates: the VJP must be g·σ(x) for every cotangent g; the backward rule clips the cotangent to [-1e4, 1e4] ("production" gradient clipping), so |g| > 1e4 gives the wrong VJP."""


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return jnp.logaddexp(x, 0.0), x


def _bwd(x, g):
    g = jnp.clip(g, -1e4, 1e4)  # 防止反向传播中的梯度爆炸
    return (g * jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
