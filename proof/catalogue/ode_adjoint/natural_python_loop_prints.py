"""Natural style: plain Python for-loops with helper functions, Chinese comments and debug prints."""
import jax
import jax.numpy as jnp

N_STEPS = 100
T_END = 1.0
print("步长 h =", T_END / N_STEPS, "步数", N_STEPS)


def f(z, W):
    return jnp.tanh(W @ z)


def rk4_step(z, W):
    h = T_END / N_STEPS  # 每次调用时按当前的步数算步长
    k1 = f(z, W)
    k2 = f(z + 0.5 * h * k1, W)
    k3 = f(z + 0.5 * h * k2, W)
    k4 = f(z + h * k3, W)
    return z + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_unrolled(z0, W):
    z = z0
    for _ in range(N_STEPS):
        z = rk4_step(z, W)
    return z


@jax.custom_vjp
def odeint_adjoint(z0, W):
    return odeint_unrolled(z0, W)


def adjoint_fwd(z0, W):
    zT = odeint_unrolled(z0, W)
    return zT, (zT, W)


def augmented_rhs(z, a, W):
    """反向时间下增广系统的右端：(-f, aᵀ∂f/∂z, aᵀ∂f/∂W)。"""
    fz, vjp_fn = jax.vjp(f, z, W)
    a_dz, a_dW = vjp_fn(a)
    return -fz, a_dz, a_dW


@jax.jit
def reverse_step(z, a, w_bar, W):
    # 对 (z, a, W̄) 整体做一步 RK4
    h = T_END / N_STEPS
    k1 = augmented_rhs(z, a, W)
    k2 = augmented_rhs(z + 0.5 * h * k1[0], a + 0.5 * h * k1[1], W)
    k3 = augmented_rhs(z + 0.5 * h * k2[0], a + 0.5 * h * k2[1], W)
    k4 = augmented_rhs(z + h * k3[0], a + h * k3[1], W)
    z_new, a_new, w_new = (
        s + (h / 6.0) * (p + 2.0 * q + 2.0 * r + t) for s, p, q, r, t in zip((z, a, w_bar), k1, k2, k3, k4)
    )
    return z_new, a_new, w_new


def adjoint_bwd(res, g):
    z, W = res
    a = g
    w_bar = jnp.zeros_like(W)
    for _ in range(N_STEPS):
        z, a, w_bar = reverse_step(z, a, w_bar, W)
    return a, w_bar


odeint_adjoint.defvjp(adjoint_fwd, adjoint_bwd)
print(odeint_adjoint.__name__, odeint_unrolled.__name__)
