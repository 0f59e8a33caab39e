"""nbgrader for a student's server on the hub: fetch, submit and fetch feedback, nothing else.

JupyterHub puts this folder on the server's JUPYTER_CONFIG_PATH for every user outside the
group ``instructors`` (deploy/hub/attnlab_hub.py); the Assignment List tab and the
``nbgrader fetch_assignment/submit/fetch_feedback`` commands read it.
"""

import getpass
import os

c = get_config()  # noqa: F821 - provided by nbgrader when it reads this file

c.CourseDirectory.course_id = "attnlab"
c.Exchange.root = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")

# Who submits. nbgrader names a submission after the Unix user running the server (and, for
# the Unix user jovyan only, after $JUPYTERHUB_USER). On a hub that name is often not the
# student: every Zero to JupyterHub pod runs as jovyan, and a local-process spawner runs everyone
# as the hub's own user. There submissions and feedback go by the hub user name, the one identity
# those deployments share. The Littlest JupyterHub gives every hub user a Unix account of their
# own, jupyter-<hub user>: there submissions go by that account, so the name a submission claims
# is the owner of its files in the exchange, which the instructor's collect checks
# (../instructor/nbgrader_config.py).
hub_user = os.environ.get("JUPYTERHUB_USER")
ngshare = os.environ.get("ATTNLAB_NGSHARE")
if hub_user and not ngshare:
    unix_user = getpass.getuser()
    own_account = unix_user == f"jupyter-{hub_user}"
    c.CourseDirectory.student_id = unix_user if own_account else hub_user

# Where graded work travels through the exchange service ngshare (Zero to JupyterHub: the hub
# sets ATTNLAB_NGSHARE, deploy/hub/attnlab_hub.py): nbgrader's fetch, submit, list and
# fetch_feedback go to ngshare with this server's hub token, and ngshare files a submission
# under the hub user that token belongs to. No student id is set then: ngshare_exchange refuses
# a submit with one ("Submitting assignments with an explicit student ID is not possible").
if ngshare:
    from ngshare_exchange import configureExchange

    configureExchange(c, ngshare)
