"""The judge: exported programs in, verdicts out.

A test cell has two parts (kit/ch4check.py). Above the line ``# —— 判定 ——`` it *exports* the
student's functions with ``jax.export`` at public shapes: serialized StableHLO programs, no
values. Below it, the *verdict* draws the inputs (``seed_for``), runs the programs on them and
asserts. While a student works both parts run in their kernel. While grading, the kernel runs
only the export part; this module runs the verdicts in a process of its own (``python -m
ch4judge``, sandboxed by the grader), which alone holds the key the inputs are drawn from.

Which programs may run, and what a program does, is kit/ch4programs.py (`load`, `Program`,
`Split`); the references and method checks the verdicts use are kit/ch4references.py and
kit/ch4verdicts.py; what a failing test may say is kit/ch4messages.py.
"""

from __future__ import annotations

import base64
import builtins
import functools
import importlib
import json
import re
import sys
import types

import ch4messages
import ch4references
import ch4verdicts
import jax
import numpy as np
from ch4messages import (
    CALLBACK_HINT,  # noqa: F401 - verdict helpers and tests take the hints from the judge
    EXPORT_HINT,
    NO_PROGRAM,
    UNSUPPORTED_HINT,  # noqa: F401 - tests take the hints from the judge
    Hidden,
    attempt,
    check_close,
    error_text,
    missing_name,
    program,
    shown,
    text_pieces,
)
from ch4programs import ALLOWED_CUSTOM_CALLS, ALLOWED_OPS, Program, Refused, Split, Unmeasurable, load  # noqa: F401
from ch4protocol import EXPORT_HELPER_NAMES, derive_seed, free_names, sizes_key, sizes_seed

# ---------------------------------------------------------------------------------------------
# What a verdict reads


class Programs:
    """A test's programs by name, as the verdict reads them: ``programs["sin2_save"]`` is a
    Program or a Split, or fails the test with the reason it is missing (the export's error, or a refusal)."""

    def __init__(self, loaded: dict[str, Program | Split | str] | None) -> None:
        self._loaded = loaded

    def __getitem__(self, name: str) -> Program | Split:
        if self._loaded is None:
            raise AssertionError(NO_PROGRAM)
        if name not in self._loaded:
            raise AssertionError(f"没有收到 {name} 的程序。")
        found = self._loaded[name]
        undefined = re.match(r"NameError: name '(\w+)' is not defined", found) if isinstance(found, str) else None
        if undefined:
            raise AssertionError(missing_name(undefined.group(1)))
        if isinstance(found, str):  # the kernel's own text: a hidden test names the program only
            said = "" if ch4messages.current is not None else f"（{found}）"
            raise AssertionError(f"导出 {name} 时出错{said}：{EXPORT_HINT}")
        return found

    def reason(self, name: str) -> str:
        """Why `name` is missing (the export's error), or "" when it is here."""
        found = (self._loaded or {}).get(name)
        return found if isinstance(found, str) else ("" if name in self else NO_PROGRAM)

    def __contains__(self, name: str) -> bool:
        return self._loaded is not None and isinstance(self._loaded.get(name), Program | Split)


def load_all(payload: dict) -> tuple[dict[str, Program | Split | str], list[str]]:
    """A test's payload ``{name: {"program": base64[, "backward": base64]} | {"error": text}}`` as
    (loaded, refusals): a Program, or a Split when the export gave both passes of a call; a refused
    program is missing from `loaded` and its reason is in `refusals`."""
    loaded, refusals = {}, []
    for name, item in payload.items():
        if isinstance(item, dict) and isinstance(item.get("error"), str):
            loaded[str(name)] = item["error"][:400]
            continue
        try:
            if not (isinstance(item, dict) and isinstance(item.get("program"), str)):
                raise Refused("格式不对")
            first = load(base64.b64decode(item["program"], validate=True))
            if "backward" in item:
                if not isinstance(item["backward"], str):
                    raise Refused("格式不对")
                first = Split(first, load(base64.b64decode(item["backward"], validate=True)))
            loaded[str(name)] = first
        except Exception as err:  # noqa: BLE001 - a refusal, whatever the bytes did
            refusals.append(f"{name}：{err}"[:300])
    return loaded, refusals


# What a test body may name besides the interface: local name -> "module" or "module:attribute".
TRUSTED = types.MappingProxyType(
    {
        "jax": "jax",
        "jnp": "jax.numpy",
        "lax": "jax.lax",
        "np": "numpy",
        "optax": "optax",
        "partial": "functools:partial",
        "check_grads": "jax.test_util:check_grads",
        "solve_ivp": "scipy.integrate:solve_ivp",
    }
)
VERDICT_HELPERS = types.MappingProxyType(
    {**{f.__name__: f for f in (missing_name, program, attempt, check_close, shown)}, **ch4verdicts.NAMES}
)


def _trusted(spec: str):
    module, _, attribute = spec.partition(":")
    loaded = importlib.import_module(module)
    return getattr(loaded, attribute) if attribute else loaded


def namespace(body: str, names: dict) -> dict:
    """The globals of one test body: real builtins, the trusted imports and helpers it names,
    then `names` (the kit's `export`/`programs`/`seed_for`, and in a kernel the interface)."""
    used = free_names(body)
    space = {"__builtins__": builtins, "__name__": "__ch4test__"}
    space.update({name: _trusted(spec) for name, spec in TRUSTED.items() if name in used})
    space.update({name: helper for name, helper in VERDICT_HELPERS.items() if name in used})
    space.update(names)
    return space


def run_body(body: str, space: dict, filename: str) -> None:
    """Run a test body. Its programs compile without most of XLA's optimisations: a verdict runs
    each program a few times on small inputs, so compiling is most of its cost (a Python-loop ODE
    answer unrolls into programs that took two minutes to compile, half as long without them).
    Results may differ from an optimised build in the last bits; every verdict compares with a
    tolerance, and JupyterLab's visible tests run this same function, so a student sees what the
    grade sees."""
    optimising = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", True)
    try:
        # optimize=0: asserts are the verdicts, and `python -O` must not strip them
        exec(compile(body, filename, "exec", optimize=0), space)
    finally:
        jax.config.update("jax_disable_most_optimizations", optimising)


# ---------------------------------------------------------------------------------------------
# The judge process (grading): `python -m ch4judge` reads one job on stdin, prints one JSON
# line per test as it is judged (a test that hangs does not take the finished ones with it).


def judge(job: dict, out=sys.stdout, record: dict | None = None) -> None:
    """`job`: {"secret", "tests": [{"id", "points", "body", "hidden"}], "programs": {test: payload},
    "cache": a folder for compiled programs (optional), "sizes_secret": the proof's, to draw inputs
    at the sizes of another secret (optional)}.
    Only the export parts ran in the student's kernel; here each whole test body runs again, where
    `programs(...)` returns what that kernel exported and `seed_for` draws the secret inputs. A
    hidden test's message says only what `Hidden` allows. `record` (the proof's, in its own process):
    each hidden test's namespace after its body ran, by test id, to search the pages for."""
    secret = job["secret"]
    sizes_secret = job.get("sizes_secret", secret)  # the proof's, to draw other inputs at the same sizes
    received = job.get("programs", {})
    if job.get("cache"):
        keep_compiled_programs(job["cache"])
    for test in job["tests"]:
        loaded, refusals = load_all(received[test["id"]]) if test["id"] in received else (None, [])

        def programs(test_id, exports, _loaded=loaded, _test=test["id"]):
            if test_id != _test:
                raise RuntimeError(f"course bug: cell {_test} exports as {test_id}")
            return Programs(_loaded)

        space = namespace(
            test["body"],
            {
                **dict.fromkeys(EXPORT_HELPER_NAMES, _not_here),
                "programs": programs,
                "seed_for": lambda t: derive_seed(secret, t),
                "sizes_for": lambda t: np.random.default_rng(sizes_seed(sizes_key(sizes_secret), t)),
            },
        )
        # The export part runs here too, without the student's names: its thunks are never called
        # here, but a comprehension may name a function while it builds them.
        used = free_names(test["body"])
        space.update({name: None for name in used if name not in space and not hasattr(builtins, name)})
        hidden = ch4messages.current = Hidden(test["body"], kit_pieces()) if test["hidden"] else None
        message = None
        try:
            # 64-bit types on: a program an answer computed in float64 runs as it was exported (in a
            # kernel, such an answer switched them on itself; there the export runs as the answer left it)
            with jax.enable_x64(True):
                run_body(test["body"], space, f"<{test['id']}>")
        except AssertionError as err:
            message = str(err).strip() or "断言失败"
        except Exception as err:  # noqa: BLE001 - a verdict that cannot finish scores 0
            message = f"评分程序判定时出错（{type(err).__name__ if hidden else error_text(err)}）"
        finally:
            if message is not None and hidden is not None:
                message = hidden.final(message)
            ch4messages.current = None
        if record is not None and test["hidden"]:
            record[test["id"]] = dict(space)
        line = {"test": test["id"], "passed": message is None, "message": message, "refused": refusals}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        out.flush()


@functools.cache  # the kit's sources do not change while a judge runs
def kit_pieces() -> frozenset[str]:
    """The pieces of the kit's own messages (ch4messages, ch4references, ch4verdicts and this module),
    which students have: what a hidden test may say besides its own body's text (ch4messages.Hidden)."""
    import inspect

    modules = (ch4messages, ch4references, ch4verdicts, sys.modules[__name__])
    return frozenset().union(*(text_pieces(inspect.getsource(m)) for m in modules))


def keep_compiled_programs(folder: str) -> None:
    """XLA's compiled programs go to `folder` and are loaded from it: JAX's persistent compilation
    cache, keyed by the program without its source locations. The judges of one grading process
    share it, so two students whose answers export the same program compile it once. Only judges
    see the folder, and no student code runs in a judge: an entry is what XLA compiled from the
    program its key names."""
    from jax.experimental.compilation_cache import compilation_cache

    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # a verdict compiles many small ones
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    compilation_cache.reset_cache()  # a forked judge inherits a server that may have checked it already
    compilation_cache.set_cache_dir(folder)


def _not_here(*args, **kwargs):
    return None  # the judge never exports: `programs` returns what the kernel exported


def main() -> None:
    judge(json.load(sys.stdin))


if __name__ == "__main__":
    main()
