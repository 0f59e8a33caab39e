#!/usr/bin/env bash
# Who teaches, on The Littlest JupyterHub: ATTNLAB_INSTRUCTORS="alice bob" (hub user names) are
# put into the hub group "instructors" when the hub (re)starts. Everyone else is a student: the
# course's hub fragment puts them into the group "students" when they log in.
#   sudo ATTNLAB_INSTRUCTORS="alice bob" deploy/tljh/instructors.sh && sudo tljh-config reload
# setup.sh runs it; the argument is the folder TLJH loads config from (tests pass their own).
#
# This only ADDS instructors: JupyterHub's load_groups never removes a member, so taking a
# name off the list and rerunning removes no one. To remove an instructor, take them out of the
# group in the hub (docs/jupyterhub.md, "Changing who teaches") AND off this list.
set -euo pipefail
CONFIG_D="${1:-/opt/tljh/config/jupyterhub_config.d}"
instructors=""
for name in ${ATTNLAB_INSTRUCTORS:-}; do
    if [[ "$name" == *[\"\\]* ]]; then echo "not a hub user name: $name" >&2; exit 2; fi
    instructors+="\"$name\", "
done
install -d "$CONFIG_D"
cat > "$CONFIG_D/attnlab_groups.py" <<PY
# Written by deploy/tljh/instructors.sh: adds these hub users to the group "instructors"
# (load_groups only adds; see that script to remove one).
c.JupyterHub.load_groups.update({"instructors": {"users": [${instructors}]}})  # noqa: F821
PY
