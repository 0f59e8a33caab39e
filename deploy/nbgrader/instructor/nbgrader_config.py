"""nbgrader for the instructor's server on the hub: the course folder and its shipped config.

JupyterHub puts this folder on the server's JUPYTER_CONFIG_PATH for members of the group
``instructors`` (deploy/hub/attnlab_hub.py), so the Formgrader tab finds the course wherever the
instructor's server starts. The course itself (a clone of this repository, by default
``~/attnlab-course``; set ATTNLAB_COURSE to move it) holds the real config: ``nbgrader_config.py``
at its root (grading outside the student's kernel, timeouts, the exchange folder).
"""

import getpass
import os
import sys

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file

course = os.path.expanduser(os.environ.get("ATTNLAB_COURSE", "~/attnlab-course"))
course_config = os.path.join(course, "nbgrader_config.py")
if not os.path.isfile(course_config):
    # traitlets' load_subconfig would pass over a missing file in silence, and nbgrader would run
    # on its defaults (the course folder = wherever it was started): say so, loudly, by name.
    missing = (
        f"attnlab: no course at {course} ({course_config} does not exist), so nbgrader has no "
        "course to work on. Clone the course there once (in a terminal: git clone --branch "
        f"<term branch> <course repository> {course}) or set ATTNLAB_COURSE to the folder "
        "that holds it."
    )
    program = os.path.abspath(getattr(sys, "argv", [""])[0] or "")
    command = os.path.basename(program) == "nbgrader" or (
        os.path.basename(os.path.dirname(program)) == "nbgrader"  # python -m nbgrader
    )
    if command and not os.path.isfile("nbgrader_config.py"):
        # an nbgrader command outside any course folder: stop it, with the reason
        raise SystemExit(f"ERROR: {missing}")
    # Formgrader (in the server) and a command run inside a course folder: traitlets logs this
    # error ("Exception while loading config file ...") in the server's log or the terminal,
    # and the rest of this file is skipped.
    raise FileNotFoundError(missing)
load_subconfig(course_config)  # noqa: F821 - traitlets

# Who submitted, and when, in the shared exchange folder (docs/jupyterhub.md, "Who submitted,
# and when"). Any student can make entries in the exchange's inbound folder, and stock collect
# believes the student id and time in an entry's name and timestamp.txt and follows symbolic
# links. attnlab's collect reads each entry through descriptors opened without following links,
# takes only folders and regular files of the student's own, dates it by the file system's change
# time (which no user can set back), caps it at 100 files and 50 MB, and skips, with a warning,
# any entry that fails (the rest of the class is still collected); release_feedback releases only
# the feedback of the assignment's own notebooks. With ngshare (below) its own classes replace
# both, and collect keeps the cap on files.
c.ExchangeFactory.collect = "attnlab.grading.exchange.VerifiedCollect"
c.ExchangeFactory.release_feedback = "attnlab.grading.exchange.VerifiedReleaseFeedback"
# c.VerifiedCollect.max_files = 100  # files and folders per submission
# c.VerifiedCollect.max_bytes = 50 * 2**20  # bytes per submission

# The owner check: a submission must belong to the Unix user its name claims, or it is not
# collected. It can only work where every student has a Unix account of their own and
# submissions go by it (../student/nbgrader_config.py): on The Littlest JupyterHub, recognised by
# the instructor's own account being jupyter-<hub user>. On a local-process spawner (one Unix user
# for all) every file has the same owner, so a name cannot be checked: the entry must then only be
# one owner's alone.
hub_user = os.environ.get("JUPYTERHUB_USER")
c.ExchangeCollect.check_owner = bool(hub_user) and getpass.getuser() == f"jupyter-{hub_user}"

# Where graded work travels through the exchange service ngshare (Zero to JupyterHub: the hub
# sets ATTNLAB_NGSHARE and makes every member of the group instructors a course instructor in
# ngshare, deploy/hub/attnlab_hub.py): release, collect and release_feedback go to ngshare with
# this server's hub token instead of the shared exchange folder.
ngshare = os.environ.get("ATTNLAB_NGSHARE")
if ngshare:
    from ngshare_exchange import configureExchange

    configureExchange(c, ngshare)
    # ngshare decides who submitted (the token's hub user) and when (its clock); the course's
    # collect for it adds the cap on files per submission (docs/jupyterhub.md)
    c.ExchangeFactory.collect = "attnlab.grading.exchange.NgshareCollect"
