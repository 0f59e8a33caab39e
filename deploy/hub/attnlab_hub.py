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

- Where graded work travels through the exchange service ngshare (Zero to JupyterHub:
  ``hub.services.ngshare`` in deploy/z2jh/values.yaml; docs/jupyterhub.md, "Who can see a
  submission"), ``$ATTNLAB_NGSHARE_API`` is ngshare's API as the hub reaches it. Then the fragment
  registers the hub service ``attnlab-roster`` (a token made afresh at every hub start; ngshare
  lists it as its admin, ``--admins attnlab-roster``), and before each server starts it puts the
  user into the ngshare course ``$ATTNLAB_COURSE_ID`` (default ``attnlab``) in their role:
  instructors as course instructors, everyone else as students (an instructor moved to
  ``students`` stops being a course instructor). The server gets ``$ATTNLAB_NGSHARE`` (ngshare as
  the servers reach it), which makes the role's nbgrader config use ngshare_exchange. Without
  ``$ATTNLAB_NGSHARE_API`` (The Littlest JupyterHub) nothing of this happens.
- Nobody logs in as ``attnlab-roster`` (``Authenticator.blocked_users``): ngshare knows its admin
  by that name, so a hub *user* of that name must not exist (deploy/hub/ngshare_service.py also
  takes an admin name only from a service's token).

It sets ``Authenticator.post_auth_hook`` and ``Spawner.pre_spawn_hook``; a site that needs hooks
of its own calls these from them.
"""

import inspect
import json
import logging
import os
import secrets
import urllib.parse

ATTNLAB_NBGRADER_CONFIG = os.environ.get("ATTNLAB_NBGRADER_CONFIG", "/etc/attnlab/nbgrader")
ATTNLAB_EXCHANGE = os.environ.get("ATTNLAB_EXCHANGE", "/srv/nbgrader/exchange")
ATTNLAB_INSTRUCTORS = "instructors"
ATTNLAB_STUDENTS = "students"
ATTNLAB_NGSHARE_API = os.environ.get("ATTNLAB_NGSHARE_API", "")  # ngshare, from the hub
ATTNLAB_NGSHARE = os.environ.get("ATTNLAB_NGSHARE", "")  # ngshare, from the users' servers
ATTNLAB_COURSE_ID = os.environ.get("ATTNLAB_COURSE_ID", "attnlab")
ATTNLAB_ROSTER = "attnlab-roster"  # the hub service that enrols users in ngshare (its admin)
attnlab_roster_token = secrets.token_hex(32)
attnlab_log = logging.getLogger("JupyterHub")  # the hub's own log (traitlets names it so)

# a user named like ngshare's admin service must never log in (merged with a site's own list)
c.Authenticator.blocked_users.add(ATTNLAB_ROSTER)  # noqa: F821

if ATTNLAB_NGSHARE_API:
    # no scopes: ngshare only asks the hub who the token belongs to (GET /hub/api/user)
    c.JupyterHub.services.append(  # noqa: F821
        {"name": ATTNLAB_ROSTER, "api_token": attnlab_roster_token}
    )

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


async def attnlab_enrol(name: str, role: str) -> None:
    """Put hub user ``name`` into ngshare's course in ``role`` (as ngshare's admin, the service
    ``attnlab-roster``); creates the course the first time. Raises RuntimeError with ngshare's
    answer when ngshare refuses."""
    from tornado.httpclient import AsyncHTTPClient  # the hub's own HTTP client

    client = AsyncHTTPClient()
    base = ATTNLAB_NGSHARE_API.rstrip("/")
    course = urllib.parse.quote(ATTNLAB_COURSE_ID, safe="")
    who = urllib.parse.quote(name, safe="")

    async def call(method: str, path: str, form: dict | None = None, fine=()) -> None:
        response = await client.fetch(
            f"{base}/{path}",
            method=method,
            headers={"Authorization": f"token {attnlab_roster_token}"},
            body=None if form is None else urllib.parse.urlencode(form),
            raise_error=False,
            request_timeout=30,
        )
        if response.code == 200 or response.code in fine:
            return
        try:
            message = json.loads(response.body)["message"]
        except Exception:  # not ngshare's JSON (ngshare down, a proxy's page)
            message = (response.body or b"").decode(errors="replace")[:200] or str(response.error)
        raise RuntimeError(f"ngshare {method} {base}/{path}: {response.code} {message}")

    person = {"first_name": name, "last_name": "", "email": ""}
    await call("POST", f"course/{course}", {"instructors": "[]"}, fine=(409,))  # 409: exists
    if role == "instructor":
        await call("POST", f"instructor/{course}/{who}", person)
    else:
        await call("DELETE", f"instructor/{course}/{who}", fine=(404,))  # 404: never was one
        await call("POST", f"student/{course}/{who}", person)


async def attnlab_pre_spawn(spawner) -> None:
    """Give the server its role's nbgrader config and the class's exchange folder (and sort
    the user into the groups, for users an admin created who never logged in); where ngshare
    carries graded work, enrol the user in its course in their role and tell the server."""
    role = attnlab_sort_into_groups(spawner.user)
    exchange = {"ATTNLAB_NGSHARE": ATTNLAB_NGSHARE} if ATTNLAB_NGSHARE_API else {}
    if ATTNLAB_NGSHARE_API:
        try:
            await attnlab_enrol(spawner.user.name, role)
        except Exception as error:  # the server still starts: the lessons need no exchange
            attnlab_log.error(
                "attnlab: could not enrol %s in the ngshare course %s as %s, so their "
                "Assignments tab and nbgrader commands will fail: %s",
                spawner.user.name,
                ATTNLAB_COURSE_ID,
                role,
                error,
            )
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
        **exchange,
    }
    attnlab_log.info(
        "attnlab: %s starts as %s (nbgrader config %s)", spawner.user.name, role, config_path[0]
    )


c.Authenticator.post_auth_hook = attnlab_post_auth  # noqa: F821
c.Spawner.pre_spawn_hook = attnlab_pre_spawn  # noqa: F821
