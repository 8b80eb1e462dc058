"""Attack: objects carried back by exceptions. While a test cell exports sin2_save, the answer
raises and catches an exception of its own and follows its traceback's frames into the kit
(the test cell's namespace, `programs`, the payload being built), then, through the live frame
locals, relabels the payload as another test's, adds entries to it and swaps the cell's
helpers; an AttributeError's `.obj` hands back the kit's module as well."""
# base: residuals wrong_grad_missing_cos
# class: objects carried back by exceptions
import sys

import jax

_seen = []


def _through_the_frames():
    try:
        raise LookupError("look around")
    except LookupError as caught:
        frame = caught.__traceback__.tb_frame
    names = []
    while frame is not None:
        code, local = frame.f_code, frame.f_locals  # a write-through view of a running function's locals
        names.append(code.co_name)
        if code.co_name == "programs" and "test_id" in local and "exports" in local:
            test = local["test_id"]
            if test.startswith("test_hidden"):
                local["test_id"] = "test_visible_value_grad"  # the payload leaves labelled as another test
            _seen.append(f"programs({test}) relabelled as {local['test_id']}")
        if code.co_name == "_exported" and "payload" in local:
            local["payload"]["verdict"] = {"error": "passed"}
            local["payload"]["passed"] = {"program": ""}
        if code.co_name == "_ch4test" and "space" in local:
            space = local["space"]
            space["programs"] = lambda test_id, exports: print("swapped programs:", test_id)
            _seen.append(f"test body starts {local['body'].splitlines()[0][:60]!r}")
        frame = frame.f_back
    _seen.append(" < ".join(names[:12]))


_save_inner, _recompute_inner = sin2_save, sin2_recompute  # noqa: F821 - defined by the base answer above


def _watching(inner):
    def forward_rule(x):  # what a graded call runs (jax.vjp)
        _through_the_frames()
        return inner.fwd(x)

    watched = jax.custom_vjp(inner.fun)
    watched.defvjp(forward_rule, inner.bwd)
    return watched


sin2_save, sin2_recompute = _watching(_save_inner), _watching(_recompute_inner)

try:
    sys.modules["ch4check"].nothing_here
except AttributeError as _err:
    _kit = _err.obj  # the exception hands back the object it was raised on
print("CARRIED BACK", type(_kit).__name__, getattr(_kit, "__name__", "?"))
# %% a cell of the student's own at the end
print("FRAMES", *_seen, sep="\n")
