"""attnlab on a JupyterHub: instructor and student roles, each with its own nbgrader config.

A JupyterHub config fragment, written for the two ways the engines load it (tests/hub/
test_hub_engines.py loads it both ways):

- The Littlest JupyterHub reads ``/opt/tljh/config/jupyterhub_config.d/*.py`` with traitlets'
  ``load_subconfig``: the file gets a fresh ``c`` (merged into the hub's config afterwards) and
  traitlets' ``get_config()``.
- Zero to JupyterHub carries the same text in ``hub.extraConfig`` of ``deploy/z2jh/values.yaml``
  and runs it with ``exec`` inside the chart's own ``jupyterhub_config.py``: ``c`` is the hub's
  config, but ``get_config`` there is the chart's ``z2jh.get_config(key, default=None)``, which
  reads Helm values. So this file uses the ``c`` both engines give it and never calls
  ``get_config``; and as its names land in the chart's namespace, they all start with
  ``attnlab``/``ATTNLAB``.

What it configures:

- Users in the hub group ``instructors`` get the role ``attnlab-instructor``: they may see the
  users, and start, stop and open the servers of the group ``students`` (to help a learner whose
  kernel is stuck).
- Everyone else is a student, and is put into the group ``students`` by the hub itself, when they
  log in and before their server starts (``attnlab_post_auth`` and ``attnlab_pre_spawn``): nobody
  lists students. An instructor is taken out of ``students``.
- Before a server starts, ``attnlab_pre_spawn`` points nbgrader at the role's config folder
  (``$ATTNLAB_NBGRADER_CONFIG/instructor`` or ``/student``; default ``/etc/attnlab/nbgrader``,
  copies of ``deploy/nbgrader/``) and passes the exchange folder (``$ATTNLAB_EXCHANGE``, default
  ``/srv/nbgrader/exchange``) on to the server.

It sets ``Authenticator.post_auth_hook`` and ``Spawner.pre_spawn_hook``; a site that needs hooks
of its own calls these from them.
"""

import inspect
import logging
import os

ATTNLAB_NBGRADER_CONFIG = os.environ.get("ATTNLAB_NBGRADER_CONFIG", "/etc/attnlab/nbgrader")
ATTNLAB_EXCHANGE = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")
ATTNLAB_INSTRUCTORS = "instructors"
ATTNLAB_STUDENTS = "students"
attnlab_log = logging.getLogger("JupyterHub")  # the hub's own log (traitlets names it so)

# ``c`` is given by the engine (see above): the subconfig's own in TLJH, the hub's in Z2JH.
c.JupyterHub.load_roles.append(  # noqa: F821
    {
        "name": "attnlab-instructor",
        "description": "Teaches attnlab: sees the class, helps students with their servers",
        "scopes": [
            "self",
            "list:users",
            "read:users",
            "read:groups",
            f"servers!group={ATTNLAB_STUDENTS}",
            f"access:servers!group={ATTNLAB_STUDENTS}",
        ],
        "groups": [ATTNLAB_INSTRUCTORS],
    }
)


def attnlab_sort_into_groups(user) -> str:
    """Put ``user`` (a hub ``User``) into ``students`` unless they are an instructor, whom it
    takes out of ``students``; returns the role, ``instructor`` or ``student``."""
    groups = {group.name for group in user.groups}
    if ATTNLAB_INSTRUCTORS in groups:
        wanted, role = groups - {ATTNLAB_STUDENTS}, "instructor"
    else:
        wanted, role = groups | {ATTNLAB_STUDENTS}, "student"
    if wanted != groups:
        # JupyterHub's own call (it creates a missing group and commits); it logs the change
        user.sync_groups(sorted(wanted))
    return role


async def attnlab_post_auth(authenticator, handler, authentication: dict) -> dict:
    """At every login: the user joins ``students`` (or leaves it, if an instructor).

    A first login comes here before JupyterHub has created the user, so the user is created the
    way JupyterHub's login does it (``user_from_username``, then ``Authenticator.add_user``),
    and the login then finds an existing user.
    """
    if handler is None:  # not a login (no request): nothing to sort
        return authentication
    name = authentication["name"]
    user = handler.find_user(name)
    if user is None:
        user = handler.user_from_username(name)
        added = authenticator.add_user(user)
        if inspect.isawaitable(added):
            await added
    attnlab_sort_into_groups(user)
    return authentication


def attnlab_pre_spawn(spawner) -> None:
    """Give the server its role's nbgrader config and the class's exchange folder (and sort
    the user into the groups, for users an admin created who never logged in)."""
    role = attnlab_sort_into_groups(spawner.user)
    if role == "student":
        # Who may open this server. The hub grants instructors access:servers!group=students,
        # but the server itself, asked with an instructor's API token, checks that against its
        # own list (by default: this server, this user) without the hub's database, so it
        # cannot see that the user is in the group. Naming the group here lets it match.
        # (In a browser the hub's OAuth resolves the group and this is not needed.)
        group_access = f"access:servers!group={ATTNLAB_STUDENTS}"
        if group_access not in spawner.oauth_access_scopes:
            spawner.oauth_access_scopes = [*spawner.oauth_access_scopes, group_access]
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
    attnlab_log.info(
        "attnlab: %s starts as %s (nbgrader config %s)", spawner.user.name, role, config_path[0]
    )


c.Authenticator.post_auth_hook = attnlab_post_auth  # noqa: F821
c.Spawner.pre_spawn_hook = attnlab_pre_spawn  # noqa: F821
