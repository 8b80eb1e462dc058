"""tools/setup.sh: refuses a too-old Python with one clear line, is a quick no-op when nothing changed,
rebuilds a moved checkout's environment and warns when no Chinese font is installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from grader import REPO

SETUP = REPO / "tools" / "setup.sh"


def run_setup(**env):
    return subprocess.run(["sh", str(SETUP)], capture_output=True, text=True, env={**os.environ, **env}, timeout=120)


def test_too_old_python_is_refused_in_one_line(tmp_path):
    old = shutil.which("python3.11")
    if old is None:  # a stand-in: this very Python, reporting itself as 3.11 to every check it runs
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text("import sys\nsys.version_info = (3, 11, 9, 'final', 0)\n")
        old = tmp_path / "python3.11"
        old.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "site"} exec {sys.executable} "$@"\n')
        old.chmod(0o755)
    said = subprocess.run([str(old), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    assert said.stdout.strip() == "(3, 11)", f"not a working Python 3.11: {said.stdout} {said.stderr}"
    # in a project of its own: a check that let it through would build that project's .venv, not ours
    done = run_setup_in(tiny_project(tmp_path / "project"), PYTHON=str(old))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "3.12" in lines[0] and "PYTHON=" in lines[0], done.stderr
    assert not (tmp_path / "project" / ".venv").exists()


def test_rerun_with_nothing_changed_is_a_no_op():
    done = run_setup()
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout + done.stderr


def tiny_project(folder: Path) -> Path:
    """A project with this setup script (and its installer), no pins and one module: quick to build from scratch."""
    (folder / "tools").mkdir(parents=True)
    shutil.copy(SETUP, folder / "tools" / "setup.sh")
    shutil.copy(REPO / "tools" / "install_pins.sh", folder / "tools" / "install_pins.sh")
    (folder / "requirements.txt").write_text("")
    (folder / "kit").mkdir()
    (folder / "kit" / "tinykit.py").write_text("WHERE = __file__\n")
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tiny-course"\nversion = "1"\n'
        '[tool.setuptools]\npy-modules = ["tinykit"]\npackage-dir = { "" = "kit" }\n'
    )
    return folder


def run_setup_in(folder: Path, **env):
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"} | {"PYTHON": sys.executable} | env
    return subprocess.run(["sh", "tools/setup.sh"], cwd=folder, capture_output=True, text=True, env=env, timeout=300)


def imported_from(folder: Path) -> str:
    python = folder / ".venv" / "bin" / "python"
    return subprocess.run(
        [str(python), "-c", "import tinykit; print(tinykit.WHERE)"], capture_output=True, text=True, cwd="/"
    ).stdout.strip()


def test_a_moved_checkout_gets_a_fresh_venv_that_imports_from_the_new_place(tmp_path):
    first = tiny_project(tmp_path / "first")
    done = run_setup_in(first)
    assert done.returncode == 0, done.stdout + done.stderr
    assert imported_from(first) == str(first / "kit" / "tinykit.py")
    moved = tmp_path / "moved"
    shutil.copytree(first, moved, symlinks=True)  # a copy: the old place still exists, the worst case
    done = run_setup_in(moved)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"moved or copied from {first}" in done.stdout, done.stdout
    assert imported_from(moved) == str(moved / "kit" / "tinykit.py")
    assert "up to date" in run_setup_in(moved).stdout


def test_a_linux_machine_without_chinese_fonts_is_warned_and_one_with_them_is_not(tmp_path):
    project = tiny_project(tmp_path / "project")

    def setup_with_fonts(listing: str):
        fake = tmp_path / f"bin{len(listing)}"
        fake.mkdir()
        (fake / "fc-list").write_text(f"#!/bin/sh\necho '{listing}'\n")  # fontconfig's answer to :lang=zh
        (fake / "fc-list").chmod(0o755)
        done = run_setup_in(project, PATH=f"{fake}:{os.environ['PATH']}")
        assert done.returncode == 0, done.stderr
        return [line for line in done.stderr.splitlines() if "Chinese font" in line]

    warning = setup_with_fonts("")
    assert len(warning) == 1 and "fonts-noto-cjk" in warning[0], warning
    assert not setup_with_fonts("/usr/share/fonts/NotoSansCJK.ttc: Noto Sans CJK SC:style=Regular")


def test_every_kit_module_is_installed_by_both_projects():
    """`import ch4check` works through the editable install: a kit module missing from a
    pyproject would import in this checkout's tests and fail in a fresh student edition."""
    import tomllib

    kit = sorted(p.stem for p in (REPO / "kit").glob("*.py"))
    for pyproject in (REPO / "pyproject.toml", REPO / "edition" / "pyproject.toml"):
        listed = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["py-modules"]
        assert sorted(listed) == kit, f"{pyproject.relative_to(REPO)} installs {sorted(listed)}, kit/ holds {kit}"
