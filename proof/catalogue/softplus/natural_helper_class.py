"""Natural style: a small helper class with __init__ fields, a call counter, __call__ and __repr__."""
import jax
import jax.numpy as jnp


class StableSigmoid:
    """σ(x) 的稳定写法；顺便记一下被调用（追踪）了几次，调试用。"""

    def __init__(self, threshold=0.0):
        self.threshold = threshold
        self.calls = 0

    def __call__(self, x):
        self.calls += 1
        e = jnp.exp(-jnp.abs(x))  # 永远不会上溢
        return jnp.where(x >= self.threshold, 1.0 / (1.0 + e), e / (1.0 + e))

    def __repr__(self):
        return f"StableSigmoid(threshold={self.threshold}, calls={self.calls})"


sigmoid = StableSigmoid()


@jax.custom_vjp
def softplus_prod(x):
    # log(1 + e^x) = max(x, 0) + log1p(e^{-|x|})
    return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(x, 0.0)


def _fwd(x):
    return softplus_prod(x), x


def _bwd(x, g):
    return (g * sigmoid(x),)


softplus_prod.defvjp(_fwd, _bwd)
print(sigmoid)
