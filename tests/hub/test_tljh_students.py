"""TLJH: what a student can read of the course is the students' edition, and bwrap is given the
AppArmor profile it needs on Ubuntu 23.10 and later.

The course folder setup is run for real (``deploy/tljh/students.sh``, as root, on a clone of
this checkout) and a real Unix student then tries to read it and clones the edition with git,
as nbgitpuller does. The AppArmor step of ``deploy/tljh/setup.sh`` is run with the sysctl, the
profile folder and ``apparmor_parser`` replaced by files of the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import in_ci
from test_sandbox_apparmor import PROFILE  # tests/ is on pytest's pythonpath

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "deploy" / "tljh" / "setup.sh"
SYSCTL = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


def apparmor_step() -> str:
    """setup.sh's AppArmor step: the ``if`` that reads the sysctl, to its ``fi``."""
    match = re.search(rf"^if .*{re.escape(SYSCTL)}.*?^fi$", SETUP.read_text(), re.S | re.M)
    assert match, "setup.sh does not read kernel.apparmor_restrict_unprivileged_userns"
    return match.group(0)


@pytest.mark.parametrize("restricted", ["1", "0"])
def test_setup_gives_bwrap_its_apparmor_profile_where_userns_is_restricted(tmp_path, restricted):
    sysctl, profiles, calls = tmp_path / "sysctl", tmp_path / "apparmor.d", tmp_path / "calls"
    sysctl.write_text(restricted + "\n")
    profiles.mkdir()
    (tmp_path / "bin").mkdir()
    parser = tmp_path / "bin" / "apparmor_parser"
    parser.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    parser.chmod(0o755)
    step = apparmor_step().replace(SYSCTL, str(sysctl)).replace("/etc/apparmor.d", str(profiles))
    assert "/proc/" not in step and "/etc/" not in step
    path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
    subprocess.run(["bash", "-euo", "pipefail", "-c", step], check=True, env={"PATH": path})
    bwrap = subprocess.run(["sh", "-c", "command -v bwrap"], capture_output=True, text=True)
    if restricted == "1":
        written = (profiles / "bwrap").read_text()
        assert written == PROFILE.format(bwrap=bwrap.stdout.strip())
        assert calls.read_text() == f"-r {profiles / 'bwrap'}\n"
    else:
        assert not list(profiles.iterdir()) and not calls.exists()


def as_user(user: str, command: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["su", user, "-s", "/bin/sh", "-c", command],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
    )


@pytest.fixture
def unix_users():
    if os.geteuid() != 0:
        if in_ci():
            pytest.fail("this test makes Unix users: CI runs it as root")
        pytest.skip("needs root (it makes Unix users)")
    from test_private_submissions import unix_users_for_the_test

    with unix_users_for_the_test("attnlab-tljh-") as made:
        yield made


@pytest.mark.slow  # 4-6 s: a clone of the checkout, a Unix user
def test_on_tljh_a_student_reads_only_the_students_edition(unix_users):
    """students.sh on a clone of the course: the folder becomes root's alone, the edition a
    student can clone (and pull) holds no solution."""
    from test_nbgitpuller import BRANCH, solutions_in

    base, users = unix_users
    srv = base / "srv"
    srv.mkdir(mode=0o755)
    course, edition = srv / "attnlab", srv / "attnlab-students.git"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(course)], check=True)
    subprocess.run(["git", "-C", str(course), "switch", "-q", "-c", BRANCH], check=True)
    for tool in ("deploy/tljh/students.sh", "deploy/students_edition.py"):  # as checked out
        shutil.copy2(ROOT / tool, course / tool)
    system = {"GIT_CONFIG_SYSTEM": str(base / "gitconfig")}  # the machine's /etc/gitconfig
    done = subprocess.run(
        [str(course / "deploy" / "tljh" / "students.sh")],
        env={
            **os.environ,
            **system,
            "ATTNLAB_STUDENTS_REPO": str(edition),
            "ATTNLAB_PYTHON": sys.executable,
        },
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert f"file://{edition} --branch {BRANCH}" in done.stdout
    (base / "gitconfig").chmod(0o644)
    home = users.add("attnlab-tljh-stu")
    env = {**system, "HOME": str(home)}
    for reach in ("ls", "cat"):
        target = course if reach == "ls" else course / "answer_keys" / "lesson7.py"
        refused = as_user("attnlab-tljh-stu", f"{reach} {target}", env)
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, refused
    clone = as_user(
        "attnlab-tljh-stu",
        f"cd && git clone -q -b {BRANCH} file://{edition} attnlab && cd attnlab && git pull -q",
        env,
    )
    assert clone.returncode == 0, clone.stderr
    copy = home / "attnlab"
    assert (copy / "notebooks" / "00-start-here.ipynb").is_file()
    assert solutions_in(copy) == []
