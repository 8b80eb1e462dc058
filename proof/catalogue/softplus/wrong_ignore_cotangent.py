"""Violates: bwd ignores the incoming cotangent g (returns sigma(x) instead of g * sigma(x))."""
# hint: test_visible_cotangent: 余切 g 必须乘进结果里
# hint: test_hidden_cotangent: 余切 g 必须乘进结果里


@jax.custom_vjp
def softplus_prod(x):
    return jnp.logaddexp(x, 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (jax.nn.sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
