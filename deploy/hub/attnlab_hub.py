"""attnlab on a JupyterHub: instructor and student roles, each with its own nbgrader config.

A JupyterHub config fragment. The Littlest JupyterHub loads it from
``/opt/tljh/config/jupyterhub_config.d/``; Zero to JupyterHub carries the same text in
``hub.extraConfig`` of ``deploy/z2jh/values.yaml`` (tests/test_deploy.py keeps them equal).

- Users in the hub group ``instructors`` get the role ``attnlab-instructor``: they may see the
  users, and start, stop and open the servers of the group ``students`` (to help a learner whose
  kernel is stuck). Everyone else is a student with the default ``user`` role.
- Before a server starts, ``attnlab_pre_spawn`` points nbgrader at the role's config folder
  (``$ATTNLAB_NBGRADER_CONFIG/instructor`` or ``/student``; default ``/etc/attnlab/nbgrader``,
  copies of ``deploy/nbgrader/``) and passes the exchange folder (``$ATTNLAB_EXCHANGE``, default
  ``/srv/nbgrader/exchange``) on to the server.
"""

import os

c = get_config()  # noqa: F821 - provided by JupyterHub when it reads this file

ATTNLAB_NBGRADER_CONFIG = os.environ.get("ATTNLAB_NBGRADER_CONFIG", "/etc/attnlab/nbgrader")
ATTNLAB_EXCHANGE = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")

c.JupyterHub.load_roles.append(
    {
        "name": "attnlab-instructor",
        "description": "Teaches attnlab: sees the class, helps students with their servers",
        "scopes": [
            "self",
            "list:users",
            "read:users",
            "read:groups",
            "servers!group=students",
            "access:servers!group=students",
        ],
        "groups": ["instructors"],
    }
)


def attnlab_role(spawner) -> str:
    """``instructor`` for members of the hub group ``instructors``, else ``student``."""
    groups = {group.name for group in spawner.user.groups}
    return "instructor" if "instructors" in groups else "student"


def attnlab_pre_spawn(spawner) -> None:
    """Give the server its role's nbgrader config and the class's exchange folder."""
    role = attnlab_role(spawner)
    config_path = [os.path.join(ATTNLAB_NBGRADER_CONFIG, role)]
    if spawner.environment.get("JUPYTER_CONFIG_PATH"):  # keep what the admin set
        config_path.append(spawner.environment["JUPYTER_CONFIG_PATH"])
    # a new dict: the configured one may be shared by every user's spawner
    spawner.environment = {
        **spawner.environment,
        "ATTNLAB_ROLE": role,
        "JUPYTER_CONFIG_PATH": os.pathsep.join(config_path),
        "ATTNLAB_EXCHANGE": ATTNLAB_EXCHANGE,
    }


c.Spawner.pre_spawn_hook = attnlab_pre_spawn
