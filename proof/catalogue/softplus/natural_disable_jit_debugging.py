"""Style: jax_disable_jit left switched on from debugging (so prints show concrete values), a rule written through log σ: softplus(x) = −log σ(−x), and the backward pass rebuilds σ(x) = exp(log σ(x)) from the saved x."""

jax.config.update("jax_disable_jit", True)  # 调试时关掉 jit，方便看中间值


def _log_sigmoid(v):
    return jax.nn.log_sigmoid(v)


@jax.custom_vjp
def softplus_prod(x):
    return -_log_sigmoid(-x)


def _forward(x):
    out = -_log_sigmoid(-x)
    return out, x  # 只存 x，σ 在反向里算


def _backward(x, g):
    slope = jnp.exp(_log_sigmoid(x))  # σ(x) = exp(log σ(x))，x 很负时也不会下溢成 0/0
    return (g * slope,)


softplus_prod.defvjp(_forward, _backward)
print("softplus_prod(3.0) =", softplus_prod(jnp.float32(3.0)))
