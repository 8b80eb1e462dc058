"""The grader's compilation cache (grader/xla_cache.py): built once per assignment from the
reference answer, loaded read-only by every graded kernel (forked or cold), and it changes no
verdict. Both directions: a kernel gets its programs from it, and cannot change it."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from ch4protocol import SEED_ENV
from helpers import kernel_session

from grader import answers, forkserver, xla_cache

pytestmark = pytest.mark.xdist_group("compile-cache")

# A program small enough to put into a cache by hand, and how a kernel counts what it loaded.
PROGRAM = "import jax, numpy as np; jax.numpy.sin(jax.device_put(np.arange(7, dtype=np.float32)))"
COUNT_HITS = """
import jax, json, warnings
warnings.simplefilter("error")  # JAX reports a cache it cannot read as a warning: make it fail the cell
hits = []
jax.monitoring.register_event_listener(lambda event, **kw: hits.append(event))
{program}
print(json.dumps({{"hits": hits.count("/jax/compilation_cache/cache_hits"),
                  "asked": hits.count("/jax/compilation_cache/compile_requests_use_cache"),
                  "dir": jax.config.jax_compilation_cache_dir,
                  "keeps_after": jax.config.jax_persistent_cache_min_compile_time_secs}}))
"""
# Every way a kernel could change a cache entry or the folder, each reporting what it raised.
CHANGE = """
import os, json
entry = sorted(os.path.join("/xla-cache", n) for n in os.listdir("/xla-cache"))[0]
def attempt(change):
    try:
        change()
        return "changed"
    except OSError as err:
        return type(err).__name__
print(json.dumps({
    "read_only_mount": bool(os.statvfs("/xla-cache").f_flag & os.ST_RDONLY),
    "owner": os.stat(entry).st_uid, "readable": len(open(entry, "rb").read()) > 0,
    "create": attempt(lambda: open("/xla-cache/new-cache", "wb").write(b"x")),
    "append": attempt(lambda: open(entry, "ab").write(b"x")),
    "truncate": attempt(lambda: os.truncate(entry, 0)),
    "remove": attempt(lambda: os.remove(entry)),
    "rename": attempt(lambda: os.rename(entry, entry + ".old")),
    "chmod": attempt(lambda: os.chmod(entry, 0o666)),
    "utime": attempt(lambda: os.utime(entry, (0, 0))),
    "mkdir": attempt(lambda: os.mkdir("/xla-cache/sub")),
    "symlink": attempt(lambda: os.symlink("/tmp/x", "/xla-cache/link")),
}))
"""


def fill(folder) -> None:
    """Put PROGRAM's compiled form into `folder`, as the builder would."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", **xla_cache.settings(folder, writable=True)}
    subprocess.run([sys.executable, "-c", PROGRAM], env=env, check=True, timeout=120)
    folder.chmod(0o755)
    for entry in folder.iterdir():
        entry.chmod(0o644)


def contents(folder) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def in_kernel(code: str, monkeypatch, cold: bool) -> dict:
    monkeypatch.setenv(SEED_ENV, "0" * 64)
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    if cold:
        monkeypatch.setattr(forkserver, "available", lambda: False)
    session = kernel_session(code)
    assert not session.errors, session.errors[-3000:]
    return json.loads(session.stdout)


@pytest.mark.parametrize("cold", [False, True], ids=["forked", "cold"])
def test_a_graded_kernel_loads_the_cache_and_cannot_change_it(tmp_path, monkeypatch, cold):
    folder = tmp_path / "cache"
    fill(folder)
    before = contents(folder)
    assert before, "the writer kept nothing: the test would prove nothing"
    monkeypatch.setattr(xla_cache, "FOLDER", folder)
    loaded = in_kernel(COUNT_HITS.format(program=PROGRAM), monkeypatch, cold)
    expected = {"hits": 1, "asked": 1, "dir": xla_cache.IN_SANDBOX, "keeps_after": float(xla_cache.NEVER)}
    assert loaded == expected, loaded
    changed = in_kernel(CHANGE, monkeypatch, cold)
    assert changed.pop("read_only_mount") and changed.pop("readable"), changed
    assert changed.pop("owner") == os.geteuid(), "the entries must be the grader's, not the kernel user's"
    assert set(changed.values()) <= {"OSError", "PermissionError"}, f"a kernel changed the cache: {changed}"
    assert contents(folder) == before


def test_without_a_cache_a_graded_kernel_compiles_as_before(tmp_path, monkeypatch):
    """No folder (never built, or removed): the kernel finds an empty one and compiles, silently."""
    monkeypatch.setattr(xla_cache, "FOLDER", tmp_path / "missing")
    loaded = in_kernel(COUNT_HITS.format(program=PROGRAM), monkeypatch, cold=False)
    assert loaded["hits"] == 0 and loaded["asked"] == 1 and loaded["dir"] == xla_cache.IN_SANDBOX, loaded


def test_the_cache_is_built_once_per_assignment_and_version(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setattr(xla_cache, "FOLDER", folder)
    assert xla_cache.ensure("softplus") == folder
    entries = [p for p in folder.iterdir() if p.is_file()]
    assert len(entries) > 20, f"the reference's programs were not kept: {entries}"
    assert {oct(p.stat().st_mode & 0o777) for p in entries} == {"0o644"} and folder.stat().st_mode & 0o777 == 0o755
    assert not list(folder.glob(".build-*")), "the builder's scratch folder was left behind"
    monkeypatch.setattr(xla_cache, "_build", lambda assignment: pytest.fail(f"{assignment} built twice"))
    assert xla_cache.ensure("softplus") == folder
    built = []
    monkeypatch.setattr(xla_cache, "_build", built.append)
    monkeypatch.setattr(xla_cache, "_digest", lambda assignment: "another-version")
    assert xla_cache.ensure("softplus") == folder and built == ["softplus"]


def test_where_the_cache_cannot_be_made_grading_goes_on(tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(xla_cache, "FOLDER", tmp_path / "file" / "cache")
    assert xla_cache.ensure("softplus") is None
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 1 and "softplus" in said[0] and "grading goes on" in said[0], said


def test_a_warm_cache_changes_no_verdict(monkeypatch):
    """The quick path with the cache and without, same inputs: the same points and messages, on
    the assignment whose tests load most from it."""
    entries = answers.entries("coloring")
    chosen = [None] + [next(e for e in entries if e.kind == kind).answer for kind in ("wrong", "natural")]
    assert xla_cache.ensure("coloring") is not None
    warm = [answers.quick_score("coloring", answer, secret="a" * 32) for answer in chosen]
    monkeypatch.setattr(xla_cache, "ensure", lambda assignment: None)
    cold = [answers.quick_score("coloring", answer, secret="a" * 32) for answer in chosen]
    assert warm == cold
    assert warm[0].points == warm[0].max_points and warm[1].points < warm[1].max_points, warm
