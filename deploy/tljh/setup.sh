#!/usr/bin/env bash
# attnlab on The Littlest JupyterHub (one VM, up to a few dozen students).
# Run as root on the VM AFTER installing TLJH (its bootstrap script), from a clone of this
# repository pinned for the term:
#   sudo git clone --branch <term branch> https://github.com/attnlab/attnlab /srv/attnlab
#   sudo /srv/attnlab/deploy/tljh/setup.sh
# Afterwards /srv/attnlab is root's alone (it holds every worked solution): students get the
# students' edition, /srv/attnlab-students.git (step 3c).
# docs/jupyterhub.md explains each step and the sizing numbers.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO="$PWD"
PIP=(/opt/tljh/user/bin/python -m pip install --no-cache-dir)

# 1. The learner environment: binder/ is the one source of truth (the same pins as Binder,
#    the Zero to JupyterHub image and ./run.sh lab), then attnlab itself, then the hub extras.
"${PIP[@]}" -r binder/requirements.txt
"${PIP[@]}" --no-deps .
"${PIP[@]}" -r deploy/hub-requirements.txt

# 1b. The sandbox the course grades students' code in (docs/instructors.md).
apt-get install -y -qq bubblewrap >/dev/null
#     Ubuntu 23.10 and later let AppArmor refuse unprivileged user namespaces to every program
#     without a profile that allows them (kernel.apparmor_restrict_unprivileged_userns = 1), and
#     bwrap needs them: without this profile grading stops, saying so. The standard profile:
#     bwrap unconfined, allowed to make user namespaces.
if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ]; then
    bwrap="$(command -v bwrap)"
    printf 'abi <abi/4.0>,\ninclude <tunables/global>\nprofile bwrap %s flags=(unconfined) {\n  userns,\n}\n' \
        "$bwrap" >/etc/apparmor.d/bwrap
    apparmor_parser -r /etc/apparmor.d/bwrap
fi

# 2. nbgrader: the per-role configs the hub hands out, and the shared exchange folder. The
#    instructor's config collects with attnlab.grading.exchange (installed with attnlab in step
#    1): who submitted and when come from the files' Unix owner and change time, never from what
#    a student writes into the exchange (docs/jupyterhub.md, "Who submitted, and when").
install -d /etc/attnlab
cp -r deploy/nbgrader /etc/attnlab/
#    The exchange root: writable by all (0777, as nbgrader requires) AND sticky (1777, like
#    /tmp), so only its owner can rename or delete what it holds. Without the sticky bit any
#    student could move the instructor's course folder aside and put one of their own in its
#    place, whose inbound they can list, and read every later submission.
install -d -m 1777 /srv/nbgrader/exchange

# 2b. Private homes. A student's home holds their nbgrader cache (each submission's secret, which
#     names their feedback in the exchange) and an instructor's holds the course (submissions,
#     grades, feedback). TLJH makes each user's home with useradd's defaults, world-readable
#     (0755) where /etc/login.defs has no HOME_MODE (Debian); make new homes 0700 and close
#     the homes TLJH has made already. docs/jupyterhub.md, "Who can see a submission".
if grep -qE '^[[:space:]]*HOME_MODE' /etc/login.defs; then
    sed -i -E 's/^[[:space:]]*HOME_MODE.*/HOME_MODE\t0700/' /etc/login.defs
else
    printf 'HOME_MODE\t0700\n' >>/etc/login.defs
fi
for home in /home/jupyter-*; do
    if [ -d "$home" ]; then chmod 0700 "$home"; fi
done

# 3. The hub: the course's fragment (instructor role, per-role nbgrader config).
install -m 0644 deploy/hub/attnlab_hub.py /opt/tljh/config/jupyterhub_config.d/attnlab_hub.py

# 3b. Who teaches: ATTNLAB_INSTRUCTORS="alice bob" (hub user names) join the hub group
#     "instructors"; everyone else is a student (the fragment puts them into "students" at
#     login). Rerunning ADDS instructors but removes none: docs/jupyterhub.md, "Changing who
#     teaches".
deploy/tljh/instructors.sh /opt/tljh/config/jupyterhub_config.d

# 3c. What students can read of the course: the students' edition, committed to
#     /srv/attnlab-students.git (their nbgitpuller link clones it); this folder, with source/ and
#     answer_keys/, becomes root's alone (deploy/tljh/students.sh says why; rerun it after every
#     `git pull` here to publish fixes).
deploy/tljh/students.sh

# 4. JupyterLab by default, per-student limits (docs/jupyterhub.md, "How big a hub"), culling.
tljh-config set user_environment.default_app jupyterlab
tljh-config set limits.memory "${ATTNLAB_MEMORY_LIMIT:-2G}"
tljh-config set limits.cpu "${ATTNLAB_CPU_LIMIT:-1}"
tljh-config set services.cull.enabled true
tljh-config set services.cull.timeout 3600
tljh-config set services.cull.every 300
tljh-config reload
echo "attnlab installed from $REPO; instructors: ${ATTNLAB_INSTRUCTORS:-none (set ATTNLAB_INSTRUCTORS)}"
