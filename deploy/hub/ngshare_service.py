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
"""

import sys

from ngshare.database import database
from ngshare.ngshare import main
from sqlalchemy.orm import object_session


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

if __name__ == "__main__":
    main(sys.argv[1:])
