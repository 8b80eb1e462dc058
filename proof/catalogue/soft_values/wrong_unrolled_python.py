"""Violates: the backward pass does not grow with the iterations (and V* at γ = 0.99); a Python loop of 200 steps, unrolled when traced and differentiated by autodiff."""


def soft_values(R, P, gamma):
    V = jnp.zeros(R.shape[0], R.dtype)
    for _ in range(200):
        V = jax.nn.logsumexp(R + gamma * (P @ V), axis=1)
    return V
