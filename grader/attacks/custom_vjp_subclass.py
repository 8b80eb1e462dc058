"""Attack: a subclass of jax.custom_vjp with its own __call__ around plain automatic
differentiation, so that an isinstance check reports a custom rule that is never used."""
# base: softplus wrong_no_custom_vjp
# layers: guard verdict
# Before the checks asked for the exact type this scored 14/14 (13/14 without the subclass).
import jax


class LooksLikeARule(jax.custom_vjp):
    def __call__(self, x):
        return self.fun(x)


softplus_prod = LooksLikeARule(softplus_prod)  # noqa: F821 - defined by the base answer above
