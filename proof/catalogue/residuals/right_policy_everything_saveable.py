"""Method (autodiff with checkpoint policies, which the statement allows): sin2_save is Σ sin x · sin x under jax.checkpoint with everything_saveable (autodiff keeps sin x and cos x, nothing recomputed), sin2_recompute the same sum under nothing_saveable (keeps x, recomputes)."""


def _f(x):
    s = jnp.sin(x)
    return jnp.sum(s * s)


sin2_save = jax.checkpoint(_f, policy=jax.checkpoint_policies.everything_saveable)
sin2_recompute = jax.checkpoint(_f, policy=jax.checkpoint_policies.nothing_saveable)
