"""Start the exchange service ngshare 0.6.0 under SQLAlchemy 2 (the hub's own, JupyterHub 5 and 6).

    python3 ngshare_service.py --admins attnlab-roster --database ... --storage ...

takes ngshare's own arguments (``python3 -m ngshare --help``). JupyterHub starts it as the hub
service ``ngshare`` (deploy/z2jh/values.yaml, hub.services.ngshare; deploy/image/hub.Dockerfile
puts this file into the hub image).

Why not ``python3 -m ngshare``: ngshare 0.6.0 makes a released assignment and a submission by
setting their parent (``Assignment(name, course)``, ``Submission(student, assignment)``) and
commits without adding them to the database session. SQLAlchemy 1.4 added them through the
parent's backref ("cascade_backrefs"); SQLAlchemy 2.0 removed that, so under SQLAlchemy 2 (which
JupyterHub's hub environment has) ``release_assignment`` and ``submit`` answer "success" and
store nothing (ngshare logs ``SAWarning: Object of type <Assignment> not in session``). This file
adds each new assignment and submission to its parent's session, exactly what SQLAlchemy 1.4 did,
then runs ngshare's own ``main``. tests/hub/test_private_submissions_z2jh.py runs ngshare through
it.

What else it changes in ngshare 0.6.0 (each checked by tests/hub/test_ngshare_service.py):

- **A timeout on asking the hub.** ngshare asks the hub whose token each request carries with
  ``requests.get`` and no timeout, inside the request (which blocks its one thread): a hub that
  does not answer held every exchange call. Here the call gives up after
  ``--attnlab-hub-timeout`` seconds (default 10; to connect, then to read) and the request is
  refused as unauthenticated.
- **An admin is a hub service.** ngshare compares the token's *name* with ``--admins``, so a hub
  *user* named ``attnlab-roster`` was ngshare's admin. Here an admin name counts only for a token
  the hub says is a service's (``"kind": "service"``).
- **Caps on what a user stores.** ``--attnlab-max-request-mb N`` (default 20) caps one request's
  body (Tornado's default is 100 MB); ``--attnlab-max-user-mb N`` (default 200) caps all of one
  user's submissions in ngshare's storage together: a submission that would pass it is refused
  with 413 and a message, and nothing of it is stored.

Everything else is ngshare's own ``main`` and arguments.
"""

import argparse
import functools
import sys

import requests
from ngshare import ngshare as ngshare_app
from ngshare.database import database
from ngshare.ngshare import main
from sqlalchemy import func
from sqlalchemy.orm import object_session
from tornado.httpserver import HTTPServer
from tornado.log import app_log

# seconds to connect to the hub, then to read its answer (run() sets it from its option)
SETTINGS = {"hub_timeout": 10.0}
MIB = 2**20


def _added_to_parents_session(cls, parent_attribute):
    made = cls.__init__

    def __init__(self, *args, **kwargs):
        made(self, *args, **kwargs)
        session = object_session(getattr(self, parent_attribute))
        if session is not None:
            session.add(self)

    cls.__init__ = __init__


_added_to_parents_session(database.Assignment, "course")
_added_to_parents_session(database.Submission, "assignment")


def _user_for_token(self, token):
    """Who ``token`` belongs to, asked of the hub with a timeout (ngshare's own has none); None
    when the hub refuses or does not answer in time."""
    try:
        r = requests.get(
            self.settings["user_url"],
            headers={"Authorization": f"token {token}"},
            timeout=SETTINGS["hub_timeout"],
        )
    except requests.RequestException as error:
        app_log.error("ngshare: the hub did not answer who a token is: %s", error)
        return None
    if r.ok:
        model = r.json()
        self.attnlab_token_kind = model.get("kind")
        return model
    return None


def _is_admin(self):
    """ngshare's admin check, for hub services only: a hub user of an admin's name is none."""
    return (
        getattr(self, "attnlab_token_kind", None) == "service"
        and self.user.id in self.application.admin
    )


ngshare_app.MyRequestHandler.user_for_token = _user_for_token
ngshare_app.MyRequestHandler.is_admin = _is_admin


def _capped_submit(max_user_bytes):
    submit = ngshare_app.SubmitAssignment.post

    def post(self, course_id, assignment_id):
        if self.user is not None:
            files = self.get_body_argument("files", None) or ""
            # the submission's files as stored: base64 in JSON, so at most 3/4 of its length
            incoming = len(files) * 3 // 4
            stored = (
                self.db.query(func.coalesce(func.sum(database.File.size), 0))
                .select_from(database.Submission)
                .join(database.Submission.files)
                .filter(database.Submission.student_id == self.user.id)
                .scalar()
            )
            if stored + incoming > max_user_bytes:
                self.json_error(
                    413,
                    f"Submission refused: {self.user.id} already stores {stored / MIB:.1f} MiB "
                    f"of submissions, and this one ({incoming / MIB:.1f} MiB) would pass the "
                    f"course's cap of {max_user_bytes / MIB:.3g} MiB per user. Ask your "
                    "instructor to remove old submissions.",
                )
        return submit(self, course_id, assignment_id)

    return post


def run(argv):
    """Take this file's own options out of ``argv`` and run ngshare's ``main`` on the rest."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--attnlab-max-request-mb", type=float, default=20)
    parser.add_argument("--attnlab-max-user-mb", type=float, default=200)
    parser.add_argument("--attnlab-hub-timeout", type=float, default=SETTINGS["hub_timeout"])
    ours, rest = parser.parse_known_args(argv)
    for name, value in vars(ours).items():
        if value <= 0:
            raise ValueError(f"--{name.replace('_', '-')} must be positive, not {value}")
    SETTINGS["hub_timeout"] = ours.attnlab_hub_timeout
    ngshare_app.HTTPServer = functools.partial(
        HTTPServer, max_body_size=int(ours.attnlab_max_request_mb * MIB)
    )
    ngshare_app.SubmitAssignment.post = _capped_submit(int(ours.attnlab_max_user_mb * MIB))
    main(rest)


if __name__ == "__main__":
    run(sys.argv[1:])
