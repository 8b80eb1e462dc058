"""Attack: hand-made artifacts that call out of the program. For test_visible_residuals every
program is a function with a `custom_call` to the CPU Python-callback target, exported with
that safety check disabled (`DisabledSafetyCheck.custom_call`); for test_visible_value_grad the
same program with the record of the disabled check erased, so only the target gives it away
(its refusals come first in the note, which names the first few)."""
# base: residuals reference
# rides: reference
# class: a custom_call outside the allow-list
import dataclasses
import sys

from jax import export as _jax_export

TARGETS = ("test_visible_value_grad", "test_visible_residuals")
_CALLBACK = "xla_ffi_python_cpu_callback"


def _calls_out(x):
    y = jax.ffi.ffi_call(_CALLBACK, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)  # noqa: F821 - the setup cell's jax
    return jnp.sum(jnp.sin(y) ** 2)  # noqa: F821


def _artifact(test_id: str) -> bytes:
    spec = jax.ShapeDtypeStruct((64,), jnp.float32)  # noqa: F821
    disabled = [_jax_export.DisabledSafetyCheck.custom_call(_CALLBACK)]
    exported = _jax_export.export(jax.jit(_calls_out), platforms=["cpu"], disabled_checks=disabled)(spec)  # noqa: F821
    if test_id == "test_visible_value_grad":
        exported = dataclasses.replace(exported, disabled_safety_checks=())
    return bytes(exported.serialize())


_kit = sys.modules["ch4check"]
_honest_programs = _kit.programs


def _programs(test_id, exports):
    if test_id in TARGETS:
        exports = {name: (lambda: _artifact(test_id)) for name in exports}
    return _honest_programs(test_id, exports)


_kit.programs = _programs
