"""Attack: subclasses of jax.custom_vjp with their own __call__ around plain automatic
differentiation, so that a type check would report custom rules that are never used."""
# base: residuals wrong_no_custom_vjp
# class: a custom_vjp look-alike
# Under the guard, before the checks asked for the exact type, such a look-alike scored full
# marks on softplus. Now the tests export the call itself (jax.vjp of it): plain autodiff, which keeps
# neither sin x and cos x nor x alone.
import jax


class LooksLikeARule(jax.custom_vjp):
    def __call__(self, x):
        return self.fun(x)


sin2_save = LooksLikeARule(sin2_save)  # noqa: F821 - defined by the base answer above
sin2_recompute = LooksLikeARule(sin2_recompute)  # noqa: F821
print("isinstance(sin2_save, jax.custom_vjp):", isinstance(sin2_save, jax.custom_vjp))
