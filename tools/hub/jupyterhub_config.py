"""JupyterHub for the course on one shared server: `make hub` (tools/hub.sh) copies this file to
<prefix>/hub/ and writes settings.json beside it; <prefix>/bin/ch04-hub starts the hub with it.

- Who logs in: Unix users, with their own passwords (PAM, JupyterHub's default: a shared server
  already has these accounts, and nothing else to keep in sync). Students are the members of the
  course's Unix group; the instructor is one user, also the hub's admin.
- What each gets: a Jupyter server running as that user. A student's runs from the course
  environment installed once, read-only, under <prefix> (<prefix>/bin/ch04-singleuser); the
  instructor's runs from their own checkout and its .venv (<prefix>/bin/ch04-instructor), so
  Formgrader reads the repository's nbgrader_config.py and the graded class in it.
- Where it listens: the proxy on settings["ip"] (loopback unless the instructor chose otherwise:
  put TLS in front of it to open it to a network); the hub's API, the proxy's API and every
  user's server on loopback only.
"""

import json
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub provides get_config to config files
settings = json.loads((Path(__file__).resolve().parent / "settings.json").read_text(encoding="utf-8"))
prefix, state = Path(settings["prefix"]), Path(settings["state"])

c.JupyterHub.bind_url = f"http://{settings['ip']}:{settings['port']}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{settings['hub_port']}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings['proxy_api_port']}"
c.ConfigurableHTTPProxy.command = [str(prefix / "proxy" / "node_modules" / ".bin" / "configurable-http-proxy")]
c.Spawner.ip = "127.0.0.1"
# The hub's own state (user database, cookie secret, pid files) in a folder only root reads.
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")

c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {settings["group"]}
c.Authenticator.allowed_users = {settings["instructor"]}
c.Authenticator.admin_users = {settings["instructor"]}

c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [str(prefix / "bin" / "ch04-singleuser")]
c.Spawner.default_url = "/lab"
# Every server knows the exchange (nbgrader's multi-user exchange: one folder all users share).
c.Spawner.environment = {"CH4_EXCHANGE": settings["exchange"], "JAX_PLATFORMS": "cpu"}
c.Spawner.start_timeout = 120  # JupyterLab and its extensions on a busy 2-core machine
c.Spawner.http_timeout = 120


def instructors_server(spawner) -> None:
    """The instructor's server runs from their checkout: its .venv, its nbgrader_config.py, the
    class graded into build/grades by `make grade SUBMISSIONS=build/collected OUT=build/grades`."""
    if spawner.user.name != settings["instructor"]:
        return
    spawner.cmd = [str(prefix / "bin" / "ch04-instructor")]
    spawner.notebook_dir = settings["repository"]
    spawner.environment = {
        **spawner.environment,
        "CH4_REPOSITORY": settings["repository"],
        "CH4_GRADES": "build/grades",
        "CH4_COLLECTED": "build/collected",
    }


c.Spawner.pre_spawn_hook = instructors_server
