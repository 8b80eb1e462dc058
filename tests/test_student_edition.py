"""The student edition: exactly the student's files, no secret in them, and from a fresh copy of its
archive its own `make setup`, `make lab` and `make check` work.

The fresh copy gets a new .venv whose site-packages sees, through a .pth line, a folder of links
to exactly the student's pins as this checkout installed them (requirements-student.txt: what the
edition's tools/install_pins.sh installs), so its `make setup` finds every pin satisfied instead
of downloading a quarter of a gigabyte again, and nothing the edition leaves out is importable;
everything else (the venv, the editable kit, the lab server) is its own. Pip installs no console
scripts or Jupyter data then; the fixture copies in those pins' Jupyter data, which `make lab` needs.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from helpers import chromium, saved_answer, student_pins
from jupyter_servers import free_port, request, running
from packaging.utils import canonicalize_name as canonical

from grader import REPO, course
from grader.instructor import edition
from proof import answers

pytestmark = pytest.mark.xdist_group("student_edition")  # one worker owns the lab server below
FAST = "safe_norm"  # the quickest exercise to run in `make check`


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("edition") / "ch04-student"
    archive = edition.build(out)
    return out, archive


def files_in(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_edition_holds_exactly_the_student_files(built):
    out, archive = built
    expected = {f"notebooks/{p.name}" for p in (REPO / "notebooks").glob("*.ipynb")}
    expected |= {f"exercises/{a}/{a}.ipynb" for a in course.ASSIGNMENTS}
    expected |= {f"kit/{p.name}" for p in (REPO / "kit").glob("*.py")}
    expected |= {str(p.relative_to(REPO / "edition")) for p in (REPO / "edition").rglob("*") if p.is_file()}
    expected |= {"requirements.txt", "environment.yml", "tools/setup.sh", "tools/install_pins.sh", "tools/lab.sh"}
    expected |= {"tools/jupyter-config/labconfig/page_config.json"}
    expected |= {str(p.relative_to(REPO)) for p in (REPO / "tools" / "jupyter-share").rglob("*") if p.is_file()}
    assert files_in(out) == expected
    with zipfile.ZipFile(archive) as z:
        in_archive = {name.split("/", 1)[1] for name in z.namelist() if not name.endswith("/")}
    assert in_archive == expected, "the archive and the folder differ"


def test_make_student_ends_by_saying_what_to_hand_out(tmp_path, monkeypatch, capsys):
    """`make student` (the release, then the edition) ends with the archive to hand out, its size
    and what students do with it, in the instructor's language; not with a maintainer's `git diff`."""
    from grader import __main__ as cli
    from grader.pipeline import release

    dry_run = subprocess.run(["make", "-n", "student"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    commands = [line for line in dry_run.splitlines() if "-m grader" in line]
    assert len(commands) == 1 and "-m grader edition --out build/student" in commands[0], dry_run
    released = []
    monkeypatch.setattr(release, "generate_release", lambda: released.append(True))  # the repo's exercises/ stay
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):  # LANG alone says the language, here and below
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    out = tmp_path / "student"
    assert cli.main(["edition", "--out", str(out)]) == 0 and released == [True], "no release before the edition"
    said = capsys.readouterr().out
    size = out.with_suffix(".zip").stat().st_size / 1e6
    assert said.splitlines() == [
        f"The student edition is ready. Hand out this one file: {out}.zip ({size:.1f} MB).",
        "Students unzip it, run `make lab` in the folder it makes and read its README.md (Chinese and English).",
        f"The same files, unpacked: {out}/. Neither holds a solution, hidden test or grader code.",
    ], said
    chinese = subprocess.run(
        [sys.executable, "-m", "grader", "edition", "--no-release", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "LANG": "zh_CN.UTF-8"},
    )  # fmt: skip
    assert chinese.returncode == 0, chinese.stderr
    assert chinese.stdout.startswith(f"学生版已生成。发给学生的就是这一个文件：{out}.zip（"), chinese.stdout
    assert "make lab" in chinese.stdout and "git diff" not in said + chinese.stdout


def test_the_readme_counts_what_the_edition_holds(built):
    """The student README's numbers are counted when the edition is built, so they are those of
    its own notebooks and exercises (counted here from the edition's files)."""
    out, _ = built
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "{{" not in readme and "}}" not in readme, "a field of edition/README.md was not filled in"
    names = [p.stem for p in (out / "notebooks").glob("*.ipynb")]
    main = sorted((n.split("_")[0] for n in names if n.startswith("4.")), key=lambda v: (int(v[2:].rstrip("abc")), v))
    appendices = sum(n.startswith("A_") for n in names)
    exercises = len(list((out / "exercises").glob("*/*.ipynb")))
    assert {"00_intro", "99_closing"} <= set(names) and len(main) + appendices + 2 == len(names), names
    for said in (
        f"{len(main)} 篇主线 notebook（{main[0]} … {main[-1]}）、结语 `99_closing`、{appendices} 篇选读附录",
        f"{exercises} 道计分练习",
        f"the opening `00_intro`, {len(main)} main-line notebooks ({main[0]} … {main[-1]})",
        f"{appendices} optional appendices (`A_…`), {exercises} graded exercises",
        f"不写 EX 就检查全部 {exercises} 道",
    ):
        assert said in readme, f"the README does not say: {said}"


def test_the_readme_says_the_download_and_its_size_on_disk_before_the_command(built):
    """Both languages say, before the first `make lab`, how much the first run downloads and how
    much it keeps; what it keeps is within a tenth of the student's pins as installed here (their
    install records; the download was measured: docs/performance.md)."""
    out, _ = built
    readme = (out / "README.md").read_text(encoding="utf-8")
    chinese, english = readme.split("## English")
    zh = re.search(r"下载约 (\d+) MB 的依赖（装好后在 `\.venv/` 里占约 (\d+) MB 磁盘）", chinese)
    en = re.search(r"downloads about (\d+) MB of exact pins, about (\d+) MB\s+on disk", english)
    assert zh and en and zh.groups() == en.groups(), (zh, en)
    assert zh.start() < chinese.index("make lab") and en.start() < english.index("`make lab`")
    installed = sum(
        Path(d.locate_file(f)).stat().st_size
        for d in student_distributions()
        for f in d.files or []
        if Path(d.locate_file(f)).exists()
    )
    assert abs(installed / 1e6 - int(zh[2])) <= 0.1 * int(zh[2]), f"installed here: {installed / 1e6:.0f} MB"
    assert int(zh[1]) < int(zh[2]) / 3, "the download is the compressed wheels, a fraction of what they unpack to"


@pytest.mark.parametrize("assignment", course.ASSIGNMENTS)
def test_edition_leaks_no_solution_hidden_test_or_catalogued_answer(built, assignment):
    out, _ = built
    secrets = edition.secret_passages(assignment)
    catalogued = edition.catalogue_passages(assignment)
    assert secrets and catalogued, f"{assignment}: found nothing to protect, so the check would prove nothing"
    published = [p for p in out.rglob("*") if p.is_file()]
    found = edition.leaks(secrets | catalogued, published)
    assert not found, "the student edition publishes:\n" + "\n".join(found)


@pytest.mark.parametrize("kind", ["reference", "catalogue"])
def test_leak_check_finds_an_answer_planted_in_the_edition(built, tmp_path, kind):
    out, _ = built
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    answer = answers.reference_answer(FAST) if kind == "reference" else answers.entries(FAST)[0].answer
    planted = answers.with_answer(answers.release_notebook(FAST), answer)
    nbformat.write(planted, copy / "exercises" / FAST / f"{FAST}.ipynb")
    secrets = edition.secret_passages(FAST) | edition.catalogue_passages(FAST)
    assert edition.leaks(secrets, list(copy.rglob("*.ipynb"))), f"a planted {kind} answer went unnoticed"


def make(folder: Path, *args, timeout=600):
    env = {**os.environ, "XDG_CACHE_HOME": str(folder.parent / "cache")}  # the student's own, not this machine's
    return subprocess.run(["make", *args], cwd=folder, capture_output=True, text=True, timeout=timeout, env=env)


def student_distributions() -> list:
    """This checkout's installed distributions that requirements-student.txt pins."""
    from importlib import metadata

    pinned = {canonical(line.split("==")[0]) for line in (REPO / "requirements-student.txt").read_text().splitlines()
              if "==" in line and not line.startswith("#")}  # fmt: skip
    found = {canonical(d.metadata["Name"]): d for d in metadata.distributions(path=[sysconfig.get_paths()["purelib"]])}
    assert pinned <= found.keys(), f"pinned for students but not installed here: {sorted(pinned - found.keys())}"
    return [found[name] for name in sorted(pinned)]


def students_pins_only(view: Path, prefix: Path) -> None:
    """Links in `view` to the top-level files and folders of the student's pins in this checkout's
    site-packages, and their Jupyter data (share/jupyter, etc/jupyter) copied under `prefix`."""
    purelib = Path(sysconfig.get_paths()["purelib"])
    view.mkdir()
    for dist in student_distributions():
        for file in dist.files or []:
            parts = Path(file).parts
            if parts[0] == "..":  # outside site-packages: scripts, and Jupyter data a student's lab reads
                data = (purelib / file).resolve().relative_to(Path(sys.prefix).resolve())
                if data.parts[:2] in (("share", "jupyter"), ("etc", "jupyter")):
                    (prefix / data).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(purelib / file, prefix / data)
            elif parts[0] != "__pycache__" and not (view / parts[0]).exists():
                (view / parts[0]).symlink_to(purelib / parts[0])


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory):
    """The archive unpacked as a student would, then its own `make setup`, seeing the student's pins alone."""
    _, archive = built
    where = tmp_path_factory.mktemp("student-home")
    shutil.unpack_archive(archive, where)
    folder = where / "ch04-student"
    base = Path(sys._base_executable)  # the interpreter this checkout's .venv was built from
    subprocess.run([str(base), "-m", "venv", str(folder / ".venv")], check=True, timeout=120)
    purelib = subprocess.run(
        [str(folder / ".venv" / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    students_pins_only(where / "pins", folder / ".venv")
    Path(purelib, "ch4-test-pins.pth").write_text(f"{where / 'pins'}\n")
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"} | {"PYTHON": str(base)}
    done = subprocess.run(["make", "setup"], cwd=folder, capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def student_python(unpacked: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(unpacked / ".venv" / "bin" / "python"), "-c", code], capture_output=True, text=True, cwd="/", timeout=300
    )


def test_the_students_environment_lacks_only_what_the_edition_leaves_out(unpacked):
    """What pip check finds missing in the student's environment is only what requirements-student.in
    leaves out (nbgrader declares notebook and ipywidgets); none of those is importable there."""
    left_out = set(student_pins().left_out((REPO / "requirements-student.in").read_text()))
    assert left_out, "requirements-student.in leaves nothing out"
    check = subprocess.run(
        [str(unpacked / ".venv" / "bin" / "python"), "-m", "pip", "check"], capture_output=True, text=True
    )
    missing = {canonical(m) for m in re.findall(r"requires (\S+), which is not installed", check.stdout)}
    assert missing and missing <= left_out, check.stdout
    assert "has requirement" not in check.stdout, check.stdout  # no version conflict either
    modules = ["notebook", "ipywidgets", "widgetsnbextension", "jupyterlab_widgets", "rfc3987_syntax", "lark"]
    found = student_python(unpacked, f"import importlib.util as u; print([m for m in {modules} if u.find_spec(m)])")
    assert found.returncode == 0 and found.stdout.strip() == "[]", found.stdout + found.stderr


def test_everything_the_notebooks_import_is_in_the_students_environment(unpacked):
    """Every module a chapter notebook or an exercise imports (its import lines, read from every
    code cell) imports in the student's environment, which holds the student's pins alone."""
    imported = set()
    for path in [
        *sorted((unpacked / "notebooks").glob("*.ipynb")),
        *sorted((unpacked / "exercises").glob("*/*.ipynb")),
    ]:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                imported |= set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_][\w.]*)", cell.source, re.M))
    assert {"jax", "numpy", "scipy", "matplotlib", "optax", "ch4check"} <= {m.split(".")[0] for m in imported}
    code = f"import importlib\nfor m in {sorted(imported)}:\n    importlib.import_module(m)\nprint('ok')"
    done = student_python(unpacked, code)
    assert done.stdout.strip() == "ok", done.stdout + done.stderr


def test_the_edition_installs_the_students_pins_only(built):
    """A student installs what the chapter, the exercises, JupyterLab and `make check` need
    (requirements-student.txt, as the edition's requirements.txt), not the grader's cluster,
    server, browser and test tools."""
    out, _ = built
    assert (out / "requirements.txt").read_text("utf-8") == (REPO / "requirements-student.txt").read_text("utf-8")
    assert "requirements-student.txt" not in files_in(out)


def test_fresh_copy_installs_its_own_kit(unpacked):
    where = subprocess.run(
        [str(unpacked / ".venv" / "bin" / "python"), "-c", "import ch4check, ch4validate; print(ch4check.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == unpacked / "kit" / "ch4check.py"


def test_make_check_fails_on_a_blank_exercise_and_passes_a_correct_one(unpacked):
    blank = make(unpacked, "check", f"EX={FAST}")
    assert blank.returncode != 0, blank.stdout + blank.stderr
    assert f"❌ exercises/{FAST}/{FAST}.ipynb" in blank.stdout, blank.stdout
    path = unpacked / "exercises" / FAST / f"{FAST}.ipynb"
    blank_text = path.read_text(encoding="utf-8")
    try:
        nbformat.write(answers.with_answer(nbformat.read(path, as_version=4), answers.reference_answer(FAST)), path)
        right = make(unpacked, "check", f"EX={FAST}")
    finally:
        path.write_text(blank_text, encoding="utf-8")
    assert right.returncode == 0, right.stdout + right.stderr
    assert f"✅ exercises/{FAST}/{FAST}.ipynb：可见测试全部通过" in right.stdout, right.stdout


@pytest.fixture(scope="module")
def lab(unpacked, tmp_path_factory):
    """`make lab` in the fresh copy, as a student runs it (here as root and with no display)."""
    port, token = free_port(), os.urandom(8).hex()
    # Lab's user settings and workspaces in a temporary folder: the browser tests below neither see
    # nor leave this machine's own (a student's first start: no setting at all).
    lab_home = tmp_path_factory.mktemp("lab-user")
    env = {**os.environ, "LAB_PORT": str(port), "JUPYTER_TOKEN": token}
    env["JUPYTERLAB_SETTINGS_DIR"] = str(lab_home / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(lab_home / "workspaces")
    env.pop("DISPLAY", None)
    # importing `grader` put this checkout's .venv/bin first on PATH: without it, `jupyter lab` and
    # its kernels run from the fresh copy's own .venv
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep) if d != str(Path(sys.executable).parent))
    with running(["make", "lab"], unpacked, env, port, token, lab_home / "lab.log") as url:
        yield {"url": url, "token": token, "folder": unpacked, "log": lab_home / "lab.log"}


def status(lab, path: str) -> int:
    return request(lab["url"], lab["token"], path)[0]


def test_make_lab_prints_the_address_of_the_intro_notebook(lab):
    printed = re.findall(r"http://127\.0\.0\.1:\d+/\S*", lab["log"].read_text(errors="replace"))
    intro = [url for url in printed if "/lab/tree/notebooks/00_intro.ipynb?token=" in url]
    assert intro, f"make lab printed {printed}, not the address of notebooks/00_intro.ipynb"


def test_make_lab_serves_the_edition_with_validate_and_no_instructor_tools(lab):
    import nbgrader

    assert status(lab, "/lab") == 200
    assert status(lab, f"/api/contents/exercises/{FAST}/{FAST}.ipynb") == 200
    # what the Validate button asks first: the server extension answers for this very version
    code, body = request(lab["url"], lab["token"], f"/nbgrader_version?version={nbgrader.__version__}")
    assert code == 200 and json.loads(body) == {"success": True}, f"nbgrader's Validate is missing: {code} {body}"
    # nbgrader's instructor pages and the exchange-based lists are off in the student edition
    for route in ("/formgrader", "/formgraders", "/assignments", "/courses", "/api/contents/solutions"):
        assert status(lab, route) == 404, f"{route} is served to students"


# ---------------------------------------------------------------------------------------------
# End to end in a real browser: a student types answers into JupyterLab and runs the notebook

WRONG, FAILS = "single_where", "test_visible_zero"  # this catalogued wrong answer fails exactly this visible test
CJK = re.compile(r"[\u4e00-\u9fff]")
OUTPUT = ".jp-OutputArea-output"
STDERR = f"{OUTPUT}[data-mime-type='application/vnd.jupyter.stderr']"  # errors render here too
PROMPTS = "[...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map(e => e.textContent.trim())"
# Run All has finished (or stopped at an error): nothing queued, and something ran since the clear
RAN = f"() => {{ const p = {PROMPTS}; return !p.includes('[*]:') && p.some(t => /^\\[\\d+\\]:$/.test(t)); }}"
CLEARED = f"() => {PROMPTS}.every(t => t === '[ ]:')"
# the status bar's "Python 3 (ipykernel) | Idle": the kernel is connected and waiting. (The toolbar's
# execution indicator says idle before any kernel exists: Run All clicked then runs nothing.)
IDLE = "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(e => e.textContent.endsWith(' | Idle'))"


def api(lab, path: str, method: str = "GET"):
    code, body = request(lab["url"], lab["token"], path, method)
    assert code < 400, f"{method} {path} answered {code}: {body[:300]}"
    return json.loads(body) if body else None


@pytest.fixture
def copy_in_lab(lab):
    """A copy of the exercise to type into (other tests use the original); removed afterwards
    with its kernel and checkpoint."""
    rel = f"exercises/{FAST}/{FAST}_e2e.ipynb"
    shutil.copyfile(lab["folder"] / "exercises" / FAST / f"{FAST}.ipynb", lab["folder"] / rel)
    try:
        yield rel
    finally:
        for session in api(lab, "/api/sessions"):
            if session["path"] == rel:
                api(lab, f"/api/sessions/{session['id']}", "DELETE")
        api(lab, f"/api/contents/{rel}", "DELETE")
        shutil.rmtree(lab["folder"] / "exercises" / FAST / ".ipynb_checkpoints", ignore_errors=True)  # left empty


@pytest.fixture
def browser():
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(executable), args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


def open_notebook(browser, lab, rel: str):
    page = browser.new_page(viewport={"width": 1280, "height": 2000})
    page.set_default_timeout(60_000)
    page.goto(f"{lab['url']}/lab/tree/{rel}?token={lab['token']}")
    page.wait_for_function(IDLE, timeout=120_000)  # the kernel has started
    return page


def menu(page, title: str, command: str):
    page.get_by_role("menuitem", name=title, exact=True).click()
    page.locator(f".lm-Menu-item[data-command='{command}']").click()


def run_all(page):
    """Clear every output, Run → Run All Cells, and wait until the kernel is done."""
    menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function(CLEARED)
    menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(RAN, timeout=240_000)  # JAX imports and compiles: seconds on a busy machine
    page.wait_for_function(IDLE, timeout=60_000)


def type_answer(page, lab, rel: str, answer: str):
    """Select the answer cell's text and type over it, then Ctrl+S; check what reached the disk."""
    path = lab["folder"] / rel
    notebook = nbformat.read(path, as_version=4)
    index = notebook.cells.index(answers.answer_cell(notebook))
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)  # one insertion: no auto-indent or auto-closed brackets
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    deadline = time.monotonic() + 30
    while (saved := saved_answer(path)) != answer:
        assert time.monotonic() < deadline, f"after Ctrl+S the answer cell on disk holds:\n{saved}"
        time.sleep(0.2)


def outputs(page) -> str:
    return "\n".join(page.locator(OUTPUT).all_text_contents())


def test_lab_shows_validate_and_no_instructor_menu_entries(lab, copy_in_lab, browser):
    from playwright.sync_api import expect

    page = open_notebook(browser, lab, copy_in_lab)
    validate = page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True)
    expect(validate, "nbgrader's Validate button is missing from the notebook toolbar").to_be_visible()
    # every entry of nbgrader's menu is an instructor tool or needs an exchange: no empty menu either
    expect(page.get_by_role("menuitem", name="Run", exact=True), "the menu bar is not there").to_be_visible()
    expect(page.get_by_role("menuitem", name="Nbgrader", exact=True), "an Nbgrader menu is shown").to_have_count(0)
    # JupyterLab asks on first start whether to fetch Jupyter's news: not a student's question here
    page.wait_for_timeout(15_000)  # the question is a notification some seconds after the page loads
    news = page.get_by_text("official Jupyter news")
    expect(news, "JupyterLab asks about Jupyter news").to_have_count(0)


def summary_shown(page, visible: list[str]) -> list[str]:
    """The lines of the exercise's last cell, the summary, once it lists every visible test."""
    from playwright.sync_api import expect

    summary = page.locator(".jp-Notebook .jp-Cell").last.locator(OUTPUT)
    expect(summary, "the summary cell shows nothing").to_contain_text("📋 测试小结", timeout=30_000)
    lines = summary.inner_text().splitlines()
    listed = [re.match(r"\s*[✅❌] (\w+)（", line) for line in lines]
    assert [m.group(1) for m in listed if m] == visible, f"the summary lists other tests:\n{lines}"
    return lines


def test_student_types_answers_in_chromium_and_sees_the_visible_tests(lab, copy_in_lab, browser, tmp_path):
    """The reference passes every visible test, and nbgrader's Validate says so and names the hidden
    tests it did not run; with a wrong answer that fails one of them, Run All goes on past it (the
    tests after it run and pass) and the last cell sums up: which passed, which failed and why, and
    the hidden tests left for grading."""
    from playwright.sync_api import expect

    source = nbformat.read(lab["folder"] / copy_in_lab, as_version=4)
    tests = [cell.source for cell in source.cells if cell.source.startswith("%%ch4test")]
    visible = [test for cell in tests for test in re.findall(r'programs\("(\w+)"', cell)]  # hidden ones export nothing
    assert len(visible) >= 3 and FAILS in visible[1:-1], f"{FAILS} must have a visible test before and after it"
    hidden = len(tests) - len(visible)
    points = {kind: 0 for kind in ("visible", "hidden")}
    for cell in source.cells:
        if cell.source.startswith("%%ch4test"):
            points["visible" if "programs(" in cell.source else "hidden"] += cell.metadata["nbgrader"]["points"]
    page = open_notebook(browser, lab, copy_in_lab)
    try:
        type_answer(page, lab, copy_in_lab, answers.reference_answer(FAST))
        run_all(page)
        for test in visible:  # expect retries: an output may reach the page just after its prompt
            passed = page.locator(OUTPUT, has_text=f"✅ {test} 通过")
            expect(passed, f"{test} did not pass with the reference answer").to_have_count(1, timeout=30_000)
        shown = outputs(page)
        passes = re.findall(r"✅ \w+ 通过", shown)
        assert len(passes) == len(visible), f"expected {len(visible)} ✅ lines, the outputs are:\n{shown}"
        assert page.locator(STDERR).count() == 0, f"an error or stderr output with the reference answer:\n{shown}"
        lines = summary_shown(page, visible)
        assert sum(line.lstrip().startswith("✅") for line in lines) == len(visible), lines
        assert f"0 个未通过（0 分）。另有隐藏测试 {hidden} 个" in lines[-1], lines
        page.locator(".jp-Notebook .jp-Cell", has_text=f"✅ {visible[0]} 通过").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "right.png"))
        # nbgrader's Validate: the visible tests pass, and its dialog says which hidden tests did not run
        page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click()
        said = page.locator(".jp-Dialog #validation-message")
        expect(said, "Validate did not say the visible tests pass").to_contain_text("可见测试全部通过", timeout=240_000)
        text = said.inner_text()
        assert f"可见测试全部通过（{len(visible)} 个，{points['visible']:g} 分）" in text, text
        total = points["visible"] + points["hidden"]
        assert f"另有 {hidden} 个隐藏测试（{points['hidden']:g} 分，全题共 {total:g} 分）这次没有运行" in text, text
        assert "Success" not in text and page.locator(".jp-Dialog-header").inner_text().strip() == "检查结果"
        page.screenshot(path=str(tmp_path / "validate.png"))
        page.locator(".jp-Dialog .jp-mod-accept").click()

        wrong = next(e.answer for e in answers.entries(FAST) if e.kind == "wrong" and e.slug == WRONG)
        type_answer(page, lab, copy_in_lab, wrong)
        run_all(page)
        for test in (t for t in visible if t != FAILS):  # the one after FAILS too: Run All went on
            passed = page.locator(OUTPUT, has_text=f"✅ {test} 通过")
            expect(passed, f"{test} did not run or pass with {WRONG}").to_have_count(1, timeout=30_000)
        expect(page.locator(STDERR), f"{FAILS} shows no error").to_have_count(1, timeout=30_000)
        assert f"✅ {FAILS} 通过" not in outputs(page), f"{FAILS} passed the wrong answer {WRONG}"
        lines = summary_shown(page, visible)
        failed = [line for line in lines if line.lstrip().startswith("❌")]
        assert len(failed) == 1 and failed[0].lstrip().startswith(f"❌ {FAILS}（可见测试 ") and CJK.search(failed[0])
        assert f"{len(visible) - 1} 个通过" in lines[-2] and f"另有隐藏测试 {hidden} 个" in lines[-2], lines
        page.locator(".jp-Notebook .jp-Cell").last.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "summary.png"))
        # what the student reads under the failing cell: the Chinese verdict first, and only it
        error = page.locator(STDERR).inner_text()
        first_line = error.strip().splitlines()[0]
        assert first_line.startswith(f"❌ {FAILS} 未通过：") and CJK.search(first_line), f"shown first:\n{error}"
        assert "Traceback" not in error and "run_cell_magic" not in error, f"a traceback is shown:\n{error}"
        # the traceback, from the edition's own kit, is one click away
        details = page.locator(".jp-Cell", has=page.locator(STDERR)).locator("details")
        expect(details.locator("pre"), "the traceback is not collapsed").not_to_be_visible()
        details.locator("summary").click()
        traceback = details.locator("pre")
        expect(traceback, "the collapsed traceback does not open").to_be_visible()
        kit = str(lab["folder"] / "kit" / "ch4check.py")
        assert kit in traceback.inner_text(), f"the traceback does not come from the edition's own kit {kit}"
        page.locator(STDERR).scroll_into_view_if_needed()
        # Validate on the wrong answer: the failed test's Chinese message comes first, its code folded
        page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click()
        said = page.locator(".jp-Dialog #validation-message")
        expect(said, "Validate did not list the failed test").to_contain_text(f"❌ {FAILS} 未通过：", timeout=240_000)
        lines = [line for line in said.inner_text().splitlines() if line.strip()]
        assert lines[0] == "有 1 个测试没有通过。每条说明下面折叠着那个测试单元格的代码，点开可以看。", lines
        assert lines[1].startswith(f"❌ {FAILS} 未通过：") and "The following cell" not in "".join(lines), lines
        code = said.locator("details")
        expect(code.locator("pre"), "the failed cell's code is not folded").not_to_be_visible()
        code.locator("summary").click()
        expect(code.locator("pre"), "the folded code does not open").to_contain_text(f'programs("{FAILS}"')
        assert page.locator(".jp-Dialog-header").inner_text().strip() == "检查结果"
        page.screenshot(path=str(tmp_path / "validate-failed.png"))
        page.locator(".jp-Dialog .jp-mod-accept").click()
    finally:
        page.screenshot(path=str(tmp_path / "end.png"))  # what the page showed last, also when a check failed
