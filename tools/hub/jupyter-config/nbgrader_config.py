"""nbgrader for students on the course's shared server (tools/hub.sh installs it in
<prefix>/jupyter-config, which their servers read): the course and nbgrader's multi-user exchange.
Assignments are fetched into ~/ch04/<assignment>/, their feedback into ~/ch04/<assignment>/feedback/."""

import os

c = get_config()  # noqa: F821 - traitlets provides get_config to config files
c.CourseDirectory.course_id = "ch04"
c.Exchange.root = os.environ.get("CH4_EXCHANGE", "/srv/nbgrader/exchange")  # set by the hub for every server
c.Exchange.path_includes_course = True
