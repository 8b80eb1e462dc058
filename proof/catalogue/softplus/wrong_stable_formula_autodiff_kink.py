"""Violates: the gradient must be sigma(x) at x = 0 too; bwd differentiates the hand-written stable formula max(x, 0) + log1p(exp(-|x|)) with jax.grad, and the conventions of max and abs at their kinks give 0 there instead of 0.5."""
# hint: test_visible_values: 梯度应为 σ(x)（x = [0] 处不符
# hint: test_visible_jit_vmap: jit+vmap 下的梯度不对
# hint: test_hidden_gradient: 整个区间上的梯度不对


def _stable(x):
    ramp = jnp.maximum(x, 0.0)  # the kink of max at 0
    tail = jnp.log1p(jnp.exp(-jnp.abs(x)))  # the kink of abs at 0
    return ramp + tail


@jax.custom_vjp
def softplus_prod(x):
    return _stable(x)


def _fwd(x):
    return _stable(x), x


def _bwd(x, g):
    return (g * jax.grad(_stable)(x),)


softplus_prod.defvjp(_fwd, _bwd)
