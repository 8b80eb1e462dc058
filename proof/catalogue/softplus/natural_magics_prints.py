"""Natural style: debug prints of __name__/__doc__ and cheap %time / %timeit magics."""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def softplus_prod(x):
    """softplus(x) = log(1 + exp(x))，用 logaddexp(x, 0) 避免上溢。"""
    return jnp.logaddexp(x, 0.0)


def softplus_fwd(x):
    y = jnp.logaddexp(x, 0.0)
    return y, x


def softplus_bwd(x, g):
    # σ(x) = exp(x - softplus(x)) = exp(-softplus(-x))，指数参数 <= 0
    return (g * jnp.exp(-jnp.logaddexp(-x, 0.0)),)


softplus_prod.defvjp(softplus_fwd, softplus_bwd)

print(softplus_prod.__name__)
print(softplus_prod.__doc__)
print("shape", softplus_prod(jnp.float32(3.0)).shape)
%time softplus_prod(jnp.float32(1.0))
%timeit -n 3 -r 1 jax.grad(softplus_prod)(jnp.float32(2.0))
