"""The classroom on a shared server, as docs/shared-server.md tells it, step by step:
`make hub` (tools/hub.sh) as root, JupyterHub from the pins with its proxy from npm, real Unix
users who log in with their passwords (PAM), and Chromium.

Two students and an instructor are created for the test. The instructor's repository is a copy
of this checkout in their home. A student logs in, fetches softplus from the Assignment List,
types an answer, submits; the instructor collects, grades with `python -m grader grade` and
releases the feedback; the student fetches it and opens the page. The second student then tries
to read the first one's submission, the solutions, the gradebook and the grading secret, and is
refused each time. The student's server and home are as the page says, and the instructor logs in
too: their server runs from the checkout and Formgrader there shows the graded class. The folders
`make hub` made have the owners and modes the page lists, and every port the hub's processes listen
on is on loopback. The round trip is one module fixture, so no test depends on another having run
first. Users, group, folders and processes are removed afterwards. Apart from the round trip,
`make hub` is run where it must refuse (not root, no instructor of its own, no Node.js >= 20, no
Python >= 3.12): one line on stderr, exit 2, nothing set up.

Like tests/test_student_edition.py, the environments are not downloaded again: the course's
environment gets a copy of this checkout's installed packages and the instructor's .venv hard
links to them, so tools/hub.sh finds every pin satisfied and no user of the hub reads this
checkout, which may be private (a `mktemp -d` clone: .ci/run runs the suite from one); everything
else (the Python copied for everyone, the kit installed from the student edition, the proxy from npm, the
hub, the users' servers) is real. It needs root; elsewhere it is skipped, loudly, and never on CI.
"""

import contextlib
import os
import pwd
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import psutil
import pytest
from helpers import CHROMIUM, only_requests_to, read_csv, saved_answer
from jupyter_servers import free_port, wait_until_answers

from grader import REPO, course
from proof import answers

pytestmark = pytest.mark.xdist_group("hub")  # one worker owns the users, the hub and the browser
ASSIGNMENT = "softplus"
TOOLS = ("useradd", "userdel", "groupadd", "groupdel", "chpasswd", "runuser", "npm", "node")


def missing_prerequisite() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "it creates Unix users, so it runs as root on Linux"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} missing"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} missing (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Two students and an instructor (Unix users with passwords), and a folder every user can
    enter for the hub's prefix, state and exchange; all gone afterwards, with the students' group
    that `make hub` creates."""
    reason = missing_prerequisite()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"the shared-server test must run on CI: {reason}")
        pytest.skip(f"THE SHARED-SERVER TEST (JupyterHub, real users) DID NOT RUN: {reason}")
    tag = secrets.token_hex(3)
    names = SimpleNamespace(first=f"ch4s1{tag}", second=f"ch4s2{tag}", instructor=f"ch4i{tag}", group=f"ch4g{tag}")
    passwords = {user: secrets.token_urlsafe(12) for user in (names.first, names.second, names.instructor)}
    base = Path(f"/tmp/ch04-hub-{tag}")  # not under pytest's tmp folders: those are root's alone
    created = []
    try:
        for user, full in ((names.first, "Li Hua"), (names.second, "Wang Fang"), (names.instructor, "Zhang Wei")):
            subprocess.run(["useradd", "-m", "-s", "/bin/sh", "-c", full, user], check=True)
            created.append(user)
        lines = "".join(f"{user}:{password}\n" for user, password in passwords.items())
        subprocess.run(["chpasswd"], input=lines, text=True, check=True)
        base.mkdir(mode=0o755)
        base.chmod(0o755)
        yield SimpleNamespace(
            **vars(names),
            passwords=passwords,
            home={user: Path(f"/home/{user}") for user in passwords},
            prefix=base / "opt-ch04",
            state=base / "srv-hub",
            exchange=base / "srv-nbgrader" / "exchange",
            repo=Path(f"/home/{names.instructor}/ch04"),
            logs=tmp_path_factory.mktemp("hub-logs"),
        )
    finally:
        for process in psutil.process_iter(["pid", "username"]):  # what the users still run, by id
            if process.info["username"] in created:
                with contextlib.suppress(psutil.Error):
                    process.kill()
        for user in created:
            subprocess.run(["userdel", "-r", user], capture_output=True)
        subprocess.run(["groupdel", names.group], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def as_user(site, user: str, *command, cwd: Path | None = None, timeout=900) -> subprocess.CompletedProcess:
    """`command` run as `user`, with the environment the hub gives that user's server."""
    env = [f"HOME={site.home[user]}", f"USER={user}", "PATH=/usr/bin:/bin", f"CH4_EXCHANGE={site.exchange}"]
    if user == site.instructor:
        env += [f"CH4_REPOSITORY={site.repo}", "CH4_GRADES=build/grades", "CH4_COLLECTED=build/collected"]
    return subprocess.run(
        ["runuser", "-u", user, "--", "env", "-i", *env, *map(str, command)],
        cwd=cwd or site.home[user],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


PINS = Path(sysconfig.get_paths()["purelib"])  # this checkout's installed packages


def seeded_venv(python: str, venv: Path, *paths: Path, link: bool = False) -> None:
    """A venv made by `python` whose own site-packages already holds the pins, and a .pth line for
    `paths` (a checkout and its kit). Never a .pth line to this checkout's packages: the hub's
    users could not read them where a checkout is private (`mktemp -d`, a home of mode 700). The
    course environment gets a copy, which `make hub` may chown and chmod for everyone; the
    instructor's own .venv (`link`) hard links, never chowned or chmodded: those inodes are this
    checkout's own files."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)  # pip: a pin
    purelib = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    shutil.rmtree(purelib)
    subprocess.run(["cp", "-al" if link else "-a", str(PINS), str(purelib)], check=True)
    for editable in purelib.glob("__editable__*ch4_autodiff_course*"):  # this checkout's, not theirs
        editable.unlink()
    if paths:
        Path(purelib, "ch4-test-paths.pth").write_text("".join(f"{p}\n" for p in paths))
    for data in ("share", "etc"):  # what pip put beside the packages (Jupyter's and JupyterHub's files)
        subprocess.run(["cp", "-al" if link else "-a", str(Path(sys.prefix, data)), str(venv / data)], check=True)


def outside_paths(venv: Path, owner: Path) -> list[str]:
    """Every path a .pth file of `venv` adds to sys.path that is not under `owner`."""
    found = []
    for pth in venv.glob("lib/python*/site-packages/*.pth"):
        for line in pth.read_text().splitlines():
            if line.startswith("/") and not Path(line).is_relative_to(owner):
                found.append(f"{pth.name}: {line}")
    return found


def hub_env(site) -> dict:
    ports = {"HUB_PORT": free_port(), "HUB_API_PORT": free_port(), "HUB_PROXY_API_PORT": free_port()}
    return {
        **{key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"},
        **{key: str(value) for key, value in ports.items()},
        "HUB_PREFIX": str(site.prefix),
        "HUB_STATE": str(site.state),
        "HUB_EXCHANGE": str(site.exchange),
        "HUB_GROUP": site.group,
        "HUB_NO_SERVICE": "1",
        "PYTHON": sys._base_executable,  # root's pyenv Python: hub.sh must copy it for everyone
    }


@pytest.fixture(scope="module")
def hub(site):
    """docs/shared-server.md's steps: the instructor's checkout (a copy of this one's files), `make hub`
    as root, the instructor's `make setup`, the hub started; yields its URL."""
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]  # the working tree
    files = subprocess.run(listed, cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (site.repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, site.repo / name)
    subprocess.run(["chown", "-R", f"{site.instructor}:{site.instructor}", str(site.repo)], check=True)
    env = hub_env(site)
    started = time.monotonic()
    done = subprocess.run(["sh", "tools/hub.sh", "python"], cwd=site.repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    python = done.stdout.strip().splitlines()[-1]
    assert python.startswith(str(site.prefix)), f"root's Python in /root was not copied for everyone: {python}"
    seeded_venv(python, site.prefix / "venv")
    done = subprocess.run(["sh", "tools/hub.sh"], cwd=site.repo, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"make hub failed:\n{done.stdout}\n{done.stderr}"
    assert "the instructor's own environment is still missing" in done.stdout, done.stdout
    assert f"created the group {site.group}" in done.stdout, done.stdout
    assert f"start it with: {site.prefix}/bin/ch04-hub" in done.stdout, done.stdout  # no systemd service here
    for student in (site.first, site.second):  # step 4, for students whose accounts exist already
        subprocess.run(["usermod", "-aG", site.group, student], check=True)
    again = subprocess.run(["sh", "tools/hub.sh"], cwd=site.repo, env=env, capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0 and "copying" not in again.stdout + again.stderr, "make hub is not idempotent:\n" + (
        again.stdout + again.stderr
    )
    # the instructor's `make setup PYTHON=...`, seeded the same way, as the instructor
    seeded = subprocess.run(["runuser", "-u", site.instructor, "--", sys.executable, "-c", "pass"], capture_output=True)
    assert seeded.returncode != 0, "this checkout's Python should be out of the instructor's reach"
    seeded_venv(python, site.repo / ".venv", site.repo, site.repo / "kit", link=True)
    for venv, owner in ((site.prefix / "venv", site.prefix), (site.repo / ".venv", site.repo)):
        # what would fail only where this checkout is private (`make test` in a `mktemp -d` clone)
        assert not outside_paths(venv, owner), f"{venv} reads packages from elsewhere: {outside_paths(venv, owner)}"
    nbgrader = site.repo / ".venv" / "bin" / "nbgrader"  # the console script pip would have written
    nbgrader.write_text(
        f"#!{site.repo}/.venv/bin/python\nimport sys\nfrom nbgrader.apps.nbgraderapp import main\nsys.exit(main())\n"
    )
    nbgrader.chmod(0o755)
    print(f"\nhub: set up in {time.monotonic() - started:.0f} s", file=sys.stderr)

    log = site.logs / "hub.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [str(site.prefix / "bin" / "ch04-hub")],
            cwd=site.state,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{env['HUB_PORT']}"
    try:
        wait_until_answers(process, f"{url}/hub/api/", log, "the hub", 120)
        yield SimpleNamespace(url=url, log=log, env=env, process=psutil.Process(process.pid))
    finally:
        process.send_signal(signal.SIGTERM)  # the hub stops the users' servers and its proxy
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def instructor(site, *command):
    done = as_user(site, site.instructor, *command, cwd=site.repo)
    assert done.returncode == 0, (
        f"{' '.join(map(str, command))} as the instructor:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
    return done


@pytest.fixture(scope="module")
def round_trip(site, hub):
    """The table's round trip, once for the module: the first student fetches, answers and submits
    in Chromium; the instructor collects, grades and releases; the student fetches the feedback.
    Both tests read what it leaves (the second student's refusals need the files to exist), so
    neither depends on the other having run first."""
    from playwright.sync_api import expect, sync_playwright

    nbgrader = [".venv/bin/nbgrader"]
    instructor(site, *nbgrader, "release_assignment", ASSIGNMENT)
    student = site.first
    outside, shots = [], site.logs

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.set_default_timeout(120_000)
        page.route("**/*", only_requests_to(hub.url, outside))
        try:
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", student)
            page.fill("#password_input", site.passwords[student])
            page.click("#login_submit")
            page.wait_for_url(re.compile(rf"/user/{student}/lab"), timeout=300_000)  # the hub spawns the server
            page.wait_for_selector(".jp-LabShell", timeout=180_000)

            page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
            page.get_by_role("menuitem", name="Assignment List").click()
            released = page.locator("#released_assignments_list")
            released.get_by_role("button", name="Fetch").click()
            fetched = page.locator("#fetched_assignments_list")
            expect(fetched, "softplus was not fetched").to_contain_text(ASSIGNMENT, timeout=120_000)
            path = course.notebook_path(site.home[student] / "ch04", ASSIGNMENT)
            assert path.is_file(), f"nothing fetched into {path}"

            # answer in the notebook, opened from the Assignment List (the assignment unfolds its notebooks)
            fetched.locator(".item_name a", has_text=ASSIGNMENT).first.click()
            fetched.locator(".assignment-notebooks .item_name a", has_text=ASSIGNMENT).click()
            page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content")
            index = nbformat.read(path, as_version=4).cells.index(
                answers.answer_cell(nbformat.read(path, as_version=4))
            )
            page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-content").click()
            page.keyboard.press("Control+a")
            answer = answers.reference_answer(ASSIGNMENT)
            page.keyboard.insert_text(answer)
            page.keyboard.press("Escape")
            page.keyboard.press("Control+s")
            deadline = time.monotonic() + 180  # a save can wait long on a loaded machine
            while saved_answer(path) != answer:
                assert time.monotonic() < deadline, "the typed answer did not reach the disk"
                page.wait_for_timeout(500)  # not time.sleep: the route handler runs only inside Playwright calls

            page.get_by_role("tab", name="Assignments").click()
            fetched.get_by_role("button", name="Submit").click()
            submitted = page.locator("#submitted_assignments_list")
            expect(submitted, "the submission does not show").to_contain_text(ASSIGNMENT, timeout=120_000)
            page.screenshot(path=str(shots / "submitted.png"))

            # the instructor: collect, grade, release the feedback (nbgrader's own commands)
            instructor(site, *nbgrader, "collect", ASSIGNMENT)
            graded = instructor(
                site,
                ".venv/bin/python",
                "-m",
                "grader",
                "grade",
                "build/collected",
                "--out",
                "build/grades",
                "--jobs",
                "1",
            )
            assert re.search(rf"{student}\s+{ASSIGNMENT}\s+14 / 14", graded.stdout), graded.stdout[-2000:]
            # graded as the instructor, each kernel in bubblewrap: no row flagged unsandboxed
            flags = read_csv(site.repo / "build" / "grades")[(student, ASSIGNMENT)]["flags"]
            instructor(site, *nbgrader, "release_feedback", ASSIGNMENT)

            # the student: Fetch Feedback, then the page
            page.get_by_role("button", name="Fetch Feedback").click()
            expect(submitted.get_by_text("(view feedback)"), "no feedback to view").to_be_visible(timeout=120_000)
            pages = list((site.home[student] / "ch04" / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
            assert len(pages) == 1, f"fetched feedback: {pages}"
            relative = pages[0].relative_to(site.home[student])
            page.goto(f"{hub.url}/user/{student}/files/{relative}")
            expect(page.locator("body"), "not the grader's feedback").to_contain_text("评分程序判定：✅")
            expect(page.locator(".text_cell_render math").first, "the statement's maths is not MathML").to_be_visible()
            page.screenshot(path=str(shots / "feedback.png"), full_page=False)
        finally:
            page.screenshot(path=str(shots / "last.png"))
            browser.close()
    return SimpleNamespace(student=student, outside=outside, page=pages[0], flags=flags)


def test_a_student_fetches_answers_submits_and_reads_the_feedback_in_chromium(site, round_trip):
    assert not round_trip.outside, f"pages asked the network for {round_trip.outside}"
    student = round_trip.student
    ours = (site.repo / "build" / "grades" / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert round_trip.page.read_text() == ours
    assert round_trip.flags == "", f"graded as the instructor but flagged {round_trip.flags!r}"


def servers_of(user: str) -> list[psutil.Process]:
    """The Jupyter servers the hub started as `user`."""
    found = []
    for process in psutil.process_iter(["username", "cmdline"]):
        if process.info["username"] == user and "jupyterhub.singleuser" in (process.info["cmdline"] or []):
            found.append(process)
    return found


def listening_sockets(process: psutil.Process) -> list[tuple[int, str, str, int]]:
    """(pid, command, address, port) of each TCP socket `process` listens on; none once it is gone."""
    try:
        command = " ".join(process.cmdline()[:2])
        connections = process.net_connections(kind="inet")
    except psutil.NoSuchProcess:
        return []
    return [(process.pid, command, c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN]


def test_a_students_server_runs_as_them_from_the_course_environment_in_a_private_home(site, round_trip):
    """What the round trip's student got from the hub: a server of their own from <prefix>, their
    home made private when it started, and their copy of the chapter notebooks."""
    student = round_trip.student
    [server] = servers_of(student)
    assert server.cmdline()[0].startswith(str(site.prefix)), server.cmdline()
    assert server.environ()["CH4_EXCHANGE"] == str(site.exchange), "the student's server does not know the exchange"
    mode = site.home[student].stat().st_mode & 0o777
    assert mode == 0o700, f"{site.home[student]} is {oct(mode)}: useradd made it readable, the hub did not close it"
    copied = sorted(p.name for p in (site.home[student] / "ch04-notebooks").glob("*.ipynb"))
    shipped = sorted(p.name for p in (site.prefix / "student" / "notebooks").glob("*.ipynb"))
    assert copied and copied == shipped, f"the chapter notebooks copied for the student: {copied}"


def test_the_instructors_hub_session_runs_from_the_checkout_and_formgrader_shows_the_class(site, hub, round_trip):
    """The instructor logs in to the hub in Chromium: their server runs from the checkout and its
    .venv, knows the exchange and the graded class, its Formgrader shows the round trip's
    submission with its score, and the instructor is the hub's admin (a student is not)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            admin = {}
            for user in (site.instructor, round_trip.student):  # the student's server runs already
                page = browser.new_context().new_page()
                page.set_default_timeout(120_000)
                page.goto(f"{hub.url}/hub/login")
                page.fill("#username_input", user)
                page.fill("#password_input", site.passwords[user])
                page.click("#login_submit")
                page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=300_000)
                admin[user] = page.request.get(f"{hub.url}/hub/admin").status
                if user == site.instructor:
                    listed = page.request.get(f"{hub.url}/user/{user}/formgrader/api/submissions/{ASSIGNMENT}")
                    assert listed.status == 200, f"the instructor's Formgrader answers {listed.status}"
                    shown = {s["student"]: (s["score"], s["max_score"]) for s in listed.json()}
        finally:
            browser.close()
    assert shown == {round_trip.student: (14.0, 14.0)}, f"Formgrader in the instructor's session shows {shown}"
    assert admin == {site.instructor: 200, round_trip.student: 403}, f"the hub's admin page answers {admin}"
    [server] = servers_of(site.instructor)
    environment = server.environ()
    assert environment["CH4_EXCHANGE"] == str(site.exchange) and environment["CH4_GRADES"] == "build/grades"
    assert server.cwd() == str(site.repo), server.cwd()
    python = Path(server.cwd(), server.cmdline()[0])  # tools/hub/instructor.sh runs .venv/bin/python
    assert python.is_relative_to(site.repo / ".venv"), server.cmdline()


def test_the_second_student_reads_none_of_it(site, round_trip):
    """Each tried, each refused: the first student's files, the exchange's lists, the instructor's
    repository; and the course environment is there for them, read-only."""
    first_copy = course.notebook_path(site.home[site.first] / "ch04", ASSIGNMENT)
    course_root = site.repo / "build" / "grades" / "course"
    assert first_copy.is_file() and (course_root / "gradebook.db").is_file(), "the round trip left no files to try"
    refused = {
        "the first student's copy": ["cat", first_copy],
        "the submissions in the exchange": ["ls", site.exchange / "ch04" / "inbound"],
        "the released feedback in the exchange": ["ls", site.exchange / "ch04" / "feedback"],
        "the solutions": ["cat", site.repo / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"],
        "the gradebook": ["cat", course_root / "gradebook.db"],
        "the grading secret": ["cat", course_root / "grading-secret"],
        "writing to the course environment": ["touch", site.prefix / "venv" / "pwned"],
    }
    for what, command in refused.items():
        done = as_user(site, site.second, *command)
        assert done.returncode != 0 and "Permission denied" in done.stderr, f"{what}: {done.stdout[:300]}"
    kit = as_user(
        site, site.second, site.prefix / "venv" / "bin" / "python", "-c", "import ch4check; print(ch4check.__file__)"
    )
    assert kit.returncode == 0 and kit.stdout.startswith(str(site.prefix)), kit.stderr


def test_make_hub_lays_out_the_folders_as_readme_says_and_every_socket_is_on_loopback(site, hub, round_trip):
    """Step 2's list, read back from the disk: who owns each folder and its mode; and every port
    the hub, its proxy, the users' servers and their kernels listen on is on 127.0.0.1."""
    instructor = pwd.getpwnam(site.instructor).pw_uid
    expected = {  # folder: (owner, mode)
        site.prefix: (0, 0o755),
        site.exchange: (0, 0o1777),
        site.exchange / "ch04": (instructor, 0o755),
        site.state: (0, 0o700),
        site.repo: (instructor, 0o700),
    }
    found = {folder: (folder.stat().st_uid, stat.S_IMODE(folder.stat().st_mode)) for folder in expected}
    wrong = {str(f): (uid, oct(mode)) for f, (uid, mode) in found.items() if (uid, mode) != expected[f]}
    assert not wrong, f"(owner uid, mode) not as docs/shared-server.md says: {wrong}"
    writable = subprocess.run(
        ["find", site.prefix, "!", "-type", "l", "-perm", "/go+w"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert not writable, f"{len(writable)} paths under {site.prefix} others may write, e.g. {writable[:3]}"
    course_python = site.prefix / "venv" / "bin" / "python"
    grader = as_user(site, site.second, course_python, "-c", "import grader")
    assert "ModuleNotFoundError: No module named 'grader'" in grader.stderr, "the grader is in the course environment"
    tree = [hub.process, *hub.process.children(recursive=True)]
    servers = {server.pid for server in servers_of(round_trip.student)}
    assert servers and servers <= {p.pid for p in tree}, "the round trip's student has no server under the hub"
    listening = [socket for process in tree for socket in listening_sockets(process)]
    ports = {port for *_, port in listening}
    assert {int(hub.env[key]) for key in ("HUB_PORT", "HUB_API_PORT", "HUB_PROXY_API_PORT")} <= ports, listening
    outside = [socket for socket in listening if socket[2] not in ("127.0.0.1", "::1")]
    assert not outside, f"listening beyond loopback: {outside}"


# ---------------------------------------------------------------------------------------------
# What `make hub` refuses: one line on stderr, exit 2, and nothing set up

SYSTEM = "/usr/bin:/bin"  # node and npm are there too
REFUSALS = {  # case: (owner of the checkout, run as, extra environment, PATH, the line)
    "run by a user": ("nobody", "nobody", {}, SYSTEM, "run it as root (sudo make hub)"),
    "the checkout is root's": ("root", "root", {}, SYSTEM, "the instructor needs a Unix account of their own"),
    "no such instructor": ("root", "root", {"HUB_INSTRUCTOR": "ch4-ghost"}, SYSTEM, "no such user: ch4-ghost"),
    "someone else's checkout": (
        "nobody", "root", {"HUB_INSTRUCTOR": "daemon"}, SYSTEM, "belongs to nobody, not to the instructor daemon"
    ),
    "no Node.js": ("nobody", "root", {}, "{bin}", "JupyterHub's proxy needs Node.js >= 20 and npm"),
    "Node.js 18": ("nobody", "root", {}, "{old}:{bin}", "Node.js v18.20.4 is too old for configurable-http-proxy"),
    "Python 3.11": ("nobody", "root", {"PYTHON": "/usr/bin/python3.11"}, SYSTEM, "is not Python >= 3.12"),
    "no such Python": ("nobody", "root", {"PYTHON": "/nowhere/python3"}, SYSTEM, "/nowhere/python3 is not Python >= 3"),
    "no Python found": ("nobody", "root", {}, "{node}:{bin}", "no Python >= 3.12 found"),
}  # fmt: skip


@pytest.mark.parametrize("case", REFUSALS)
def test_make_hub_refuses_with_one_line_and_sets_up_nothing(case):
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("make hub's refusals must be tested on CI, as root")
        pytest.skip("MAKE HUB'S REFUSALS WERE NOT TESTED: they run as root (runuser, chown)")
    owner, user, extra, path, line = REFUSALS[case]
    base = Path(f"/tmp/ch04-hub-refuses-{secrets.token_hex(3)}")  # every user can enter it
    try:
        base.mkdir(mode=0o755)
        base.chmod(0o755)
        script = base / "checkout" / "tools" / "hub.sh"  # a checkout of one file: it stops before reading more
        script.parent.mkdir(parents=True)
        shutil.copy2(REPO / "tools" / "hub.sh", script)
        subprocess.run(["chown", "-R", owner, str(base / "checkout")], check=True)
        (base / "bin").mkdir()
        for tool in ("uname", "id", "stat", "dirname"):  # what it runs before it looks for Node.js
            (base / "bin" / tool).symlink_to(shutil.which(tool))
        (base / "old").mkdir()
        for tool in ("node", "npm"):  # `node -p ...` prints the major version, `node --version` all of it
            (base / "old" / tool).write_text('#!/bin/sh\n[ "$1" = -p ] && echo 18 || echo v18.20.4\n')
            (base / "old" / tool).chmod(0o755)
        (base / "node").mkdir()  # the real ones, and no Python beside them
        for tool in ("node", "npm"):
            (base / "node" / tool).symlink_to(shutil.which(tool))
        where = {"HUB_PREFIX": base / "opt", "HUB_STATE": base / "state", "HUB_EXCHANGE": base / "exchange"}
        where["PATH"] = path.format(bin=base / "bin", old=base / "old", node=base / "node")
        env = [f"{key}={value}" for key, value in {**where, **extra}.items()]
        done = subprocess.run(
            ["runuser", "-u", user, "--", "/usr/bin/env", "-i", *env, "/bin/sh", str(script)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and done.stdout == "", f"exit {done.returncode}, stdout {done.stdout!r}"
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("hub: ") and line in done.stderr, done.stderr
        assert sorted(p.name for p in base.iterdir()) == ["bin", "checkout", "node", "old"], "it set something up"
        assert stat.S_IMODE((base / "checkout").stat().st_mode) == 0o755, "it changed the checkout's mode"
    finally:
        shutil.rmtree(base, ignore_errors=True)
