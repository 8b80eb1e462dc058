"""Violates: the gradient to 2e-4 near γ = 1; this bwd takes central differences (step 1e-3) of the while_loop solver along every input entry, which float32 cannot make accurate."""
import jax.flatten_util


def _bellman(V, R, P, gamma):
    return jax.nn.logsumexp(R + gamma * (P @ V), axis=1)


def _iterate(R, P, gamma):
    def keep_going(state):
        V, V_prev, step = state
        return (jnp.max(jnp.abs(V - V_prev)) > 1e-7 * jnp.maximum(1.0, jnp.max(jnp.abs(V)))) & (step < 10_000)

    def advance(state):
        V, _, step = state
        return _bellman(V, R, P, gamma), V, step + 1

    V0 = jnp.zeros(R.shape[0], R.dtype)
    return lax.while_loop(keep_going, advance, (_bellman(V0, R, P, gamma), V0, 1))[0]


@jax.custom_vjp
def soft_values(R, P, gamma):
    return _iterate(R, P, gamma)


def _fwd(R, P, gamma):
    V = _iterate(R, P, gamma)
    return V, (V, R, P, gamma)


def _bwd(res, g):
    V, R, P, gamma = res
    flat, unflatten = jax.flatten_util.ravel_pytree((R, P, gamma))
    eps = 1e-3

    def slope(k):  # 沿第 k 个输入元素的中心差分，再与余切 g 做内积
        e = jnp.zeros_like(flat).at[k].set(eps)
        return jnp.vdot(g, _iterate(*unflatten(flat + e)) - _iterate(*unflatten(flat - e))) / (2 * eps)

    return unflatten(lax.map(slope, jnp.arange(flat.size)))


soft_values.defvjp(_fwd, _bwd)
