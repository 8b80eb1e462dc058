"""A Jupyter server extension for Formgrader on this course (`make formgrader`, `make lab`).

Formgrader offers buttons whose nbgrader step the course replaces (Generate, Autograde, Generate
Feedback: grader/instructor/nbgrader_guard.py makes them refuse, as `python -m grader grade` does that work),
and explains nbgrader's own workflow. This extension puts the course's page templates in front
of Formgrader's: they hide those buttons and say what the course does instead.

Ours also show a student with one name as that name (Formgrader wrote "alice,") and an assignment
not in the exchange as handed out in the student edition (Formgrader said "draft"), in the
instructor's language (grader/i18n.py).

It also fixes the login cookie of a server at the root URL: Formgrader strips the trailing slash
from base_url, so a deep link with ?token= set a cookie with no Path, the browser scoped it to
the page's folder, and the page's API calls were sent to the login page ("Loading, please wait…").
"""

from pathlib import Path

from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader

from grader import i18n

TEMPLATES = Path(__file__).parent.parent / "templates" / "formgrader_pages"


def _jupyter_server_extension_points():
    return [{"module": "grader.instructor.formgrader_pages"}]


def _load_jupyter_server_extension(serverapp):
    serverapp.identity_provider.cookie_options.setdefault("path", serverapp.base_url)


async def _start_jupyter_server_extension(serverapp):
    # Started after every extension loaded, so Formgrader's template environment exists.
    env = serverapp.web_app.settings.get("nbgrader_jinja2_env")
    if env is None:
        serverapp.log.warning("grader.instructor.formgrader_pages: Formgrader is not enabled; nothing to change")
        return
    # Ours first; Formgrader's own stay reachable as nbgrader/<name> for ours to extend.
    env.loader = ChoiceLoader([FileSystemLoader(TEMPLATES), PrefixLoader({"nbgrader": env.loader}), env.loader])
    env.globals["_"] = i18n._  # what ours add is in the instructor's language (the server's locale)
