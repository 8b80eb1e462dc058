"""Attack: the answer cell itself displays an exported-programs output for every test, labelled
with each test's id and holding programs exported from correct functions of its own (the
interface keeps the wrong answer), and prints what passing tests print."""
# base: residuals wrong_grad_missing_cos
# class: programs outside test cells
from ch4check import MIME, _exported, export, export_split, f32
from IPython.display import display


def _square_sum(x):
    return jnp.sum(jnp.sin(x) ** 2)  # noqa: F821 - the setup cell's jnp


_right_save = jax.custom_vjp(_square_sum)  # noqa: F821 - the setup cell's jax
_right_save.defvjp(lambda x: (_square_sum(x), (jnp.sin(x), jnp.cos(x))), lambda r, g: (2.0 * g * r[0] * r[1],))  # noqa: F821
_right_recompute = jax.custom_vjp(_square_sum)  # noqa: F821
_right_recompute.defvjp(lambda x: (_square_sum(x), x), lambda x, g: (g * jnp.sin(2.0 * x),))  # noqa: F821
_RIGHT = {"sin2_save": _right_save, "sin2_recompute": _right_recompute}


def _splits(sizes):
    return {f"{name} n={n}": (lambda f=f, n=n: export_split(f, f32(n))) for n in sizes for name, f in _RIGHT.items()}


def _value_grad(n):
    exports = {name: (lambda f=f: export_split(f, f32(n))) for name, f in _RIGHT.items()}
    exports |= {f"{name} vmap(grad)": (lambda f=f: export(jax.vmap(jax.grad(f)), f32(3, n))) for name, f in _RIGHT.items()}  # noqa: F821
    return exports


_FORGED = {  # the hidden tests' length is drawn: every length they may draw
    "test_visible_value_grad": _value_grad(64),
    "test_visible_residuals": _splits([64, 37]),
    "test_hidden_random": {k: v for n in range(40, 200, 37) for k, v in _splits([n]).items()},
    "test_hidden_cotangent": _value_grad(96),
    "test_hidden_residuals": _splits([96]),
}
for _test, _exports in _FORGED.items():
    display({MIME: {"test": _test, "programs": _exported(_exports)}, "text/plain": f"🔒 测试 {_test}"}, raw=True)
    print(f"✅ {_test} 通过")
print("✅ 全部测试通过：12 / 12")
