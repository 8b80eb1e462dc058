"""Natural style: a callable loss class (fields set in __init__, call counter, __repr__) and a __main__ check."""
import jax
import jax.numpy as jnp


class StoppedSquareLoss:
    """L(x, w) = scale · Σ (sg(x_i) w)²，这里 scale = 1。"""

    def __init__(self, scale=1.0):
        self.scale = scale
        self.calls = 0

    def __call__(self, x, w):
        self.calls += 1  # 每次被追踪都会加一，调试时看看
        frozen_x = jax.lax.stop_gradient(x)
        return self.scale * jnp.sum((frozen_x * w) ** 2)

    def __repr__(self):
        return f"StoppedSquareLoss(scale={self.scale}, calls={self.calls})"


loss_fn = StoppedSquareLoss()


def grad_through_stop(x, w):
    return jax.grad(loss_fn, argnums=1)(x, w)


if __name__ == "__main__":
    x = jnp.array([0.5, -1.5, 2.0])
    w = jnp.float32(1.5)
    print(grad_through_stop(x, w), "应为", 2 * 1.5 * float(jnp.sum(x**2)))
    print("对 x 的导数:", jax.grad(grad_through_stop)(x, w))
    print(loss_fn)
