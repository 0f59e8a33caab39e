"""nbgrader for a student's server on the hub: fetch, submit and fetch feedback, nothing else.

JupyterHub puts this folder on the server's JUPYTER_CONFIG_PATH for every user outside the
group ``instructors`` (deploy/hub/attnlab_hub.py); the Assignment List tab and the
``nbgrader fetch_assignment/submit/fetch_feedback`` commands read it.
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file

c.CourseDirectory.course_id = "attnlab"
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")

# Who submits. nbgrader names a submission after the Unix user running the server (and, for
# the Unix user jovyan only, after $JUPYTERHUB_USER). On a hub that name is not the student:
# every Zero to JupyterHub pod runs as jovyan, a local-process spawner runs everyone as the
# hub's own user, and The Littlest JupyterHub prefixes names (jupyter-alice). The hub user name
# is the one identity every deployment shares, so submissions and feedback go by it.
if os.environ.get("JUPYTERHUB_USER"):
    c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
