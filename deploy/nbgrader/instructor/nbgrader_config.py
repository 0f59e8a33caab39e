"""nbgrader for the instructor's server on the hub: the course folder and its shipped config.

JupyterHub puts this folder on the server's JUPYTER_CONFIG_PATH for members of the group
``instructors`` (deploy/hub/attnlab_hub.py), so the Formgrader tab finds the course wherever the
instructor's server starts. The course itself (a clone of this repository, by default
``~/attnlab-course``; set ATTNLAB_COURSE to move it) holds the real config: ``nbgrader_config.py``
at its root (grading outside the student's kernel, timeouts, the exchange folder).
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file

course = os.path.expanduser(os.environ.get("ATTNLAB_COURSE", "~/attnlab-course"))
load_subconfig(os.path.join(course, "nbgrader_config.py"))  # noqa: F821 - traitlets

# Submissions are named after hub users (see ../student/nbgrader_config.py), which need not be
# the Unix owners of the files in the exchange (jovyan, jupyter-alice, the hub's own user):
# nbgrader's owner check would only warn about every submission.
c.CollectApp.check_owner = False
