#!/usr/bin/env bash
# What the students can read of the course on TLJH: its students' edition, and nothing else.
# Run as root from the course folder's clone; setup.sh runs it, and so should you after every
# `git pull` of the course folder, to publish the term's fixes to the students:
#   sudo /srv/attnlab/deploy/tljh/students.sh
# 1. The course folder holds source/ (every worked solution), answer_keys/ and tests/: it becomes
#    root's alone (0700), so no student (and no student's code) can read anything under it.
#    Nothing at run time reads it (setup.sh installs copies); instructors teach from their own
#    clone in their private home (docs/jupyterhub.md, "The Littlest JupyterHub, step by step").
# 2. The students' edition (deploy/students_edition.py: notebooks/, the package, the
#    environment's files; no solution) is committed to a bare repository every user can read,
#    $ATTNLAB_STUDENTS_REPO (/srv/attnlab-students.git), on the course folder's branch
#    ($ATTNLAB_TERM_BRANCH overrides it): the students' nbgitpuller link clones that.
# 3. git refuses to read a repository another user owns unless it is trusted (safe.directory):
#    the edition is trusted system-wide, for the students' git.
set -euo pipefail
cd "$(dirname "$0")/../.."
COURSE="$PWD"
EDITION="${ATTNLAB_STUDENTS_REPO:-/srv/attnlab-students.git}"
BRANCH="${ATTNLAB_TERM_BRANCH:-$(git -C "$COURSE" rev-parse --abbrev-ref HEAD)}"
PYTHON="${ATTNLAB_PYTHON:-/opt/tljh/user/bin/python}"
if [ "$BRANCH" = HEAD ]; then
    echo "the course folder is on no branch: set ATTNLAB_TERM_BRANCH to the term's branch" >&2
    exit 2
fi

chmod 0700 "$COURSE"
"$PYTHON" deploy/students_edition.py "$EDITION" --branch "$BRANCH"
chmod -R a+rX "$EDITION"
chmod -R go-w "$EDITION"
if ! git config --system --get-all safe.directory 2>/dev/null | grep -qxF "$EDITION"; then
    git config --system --add safe.directory "$EDITION"
fi
echo "students' link: python deploy/nbgitpuller_link.py https://<your hub> file://$EDITION --branch $BRANCH"
