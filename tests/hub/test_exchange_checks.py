"""What the course's collect accepts from an inbound entry, case by case (fast; needs root).

attnlab.grading.exchange.read_submission reads a submission through descriptors it checks:
these cases give it one folder each, owned by the unprivileged user ``nobody`` (the student),
and show what it refuses and why. The whole flow with real Unix users and stock nbgrader is
tests/hub/test_exchange_attacks.py.
"""

from __future__ import annotations

import datetime
import os
import pwd
import time
from pathlib import Path

import pytest
from nbgrader.utils import notebook_hash, parse_utc

from attnlab.grading.exchange import SubmissionRefused, read_submission

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (to give files away)")


STUDENT = pwd.getpwnam("nobody").pw_uid


def give(*paths: Path) -> None:
    """Make ``paths`` the student's (``nobody``'s)."""
    for path in paths:
        os.chown(path, STUDENT, -1, follow_symlinks=False)


@pytest.fixture
def inbound(tmp_path):
    folder = tmp_path / "inbound"
    (folder / "s" / "sub").mkdir(parents=True)
    (folder / "s" / "a.ipynb").write_text("{}")
    (folder / "s" / "sub" / "data.txt").write_text("x" * 10)
    give(*(folder / "s").rglob("*"), folder / "s")

    def read(name="s", **caps):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return read_submission(
                fd,
                name,
                STUDENT,
                max_files=caps.get("max_files", 100),
                max_bytes=caps.get("max_bytes", 1000),
                ignore=[".ipynb_checkpoints"],
            )
        finally:
            os.close(fd)

    read.folder = folder / "s"
    return read


def refused(read, **caps) -> str:
    with pytest.raises(SubmissionRefused) as error:
        read(**caps)
    return str(error.value)


def test_a_students_own_folders_and_files_are_read(inbound):
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    time.sleep(0.01)
    (inbound.folder / ".ipynb_checkpoints").mkdir()  # passed over, not counted
    os.utime(inbound.folder / "a.ipynb", (0, 0))  # an mtime of 1970: the ctime is now
    found = inbound(max_files=3)
    assert found.files == {"a.ipynb": b"{}", "sub/data.txt": b"x" * 10}
    assert found.folders == ["sub"]
    assert found.changed > before


def _symlink(f: Path) -> None:
    (f / "sub" / "key.html").symlink_to(f.parent.parent / "answer_key.py")
    give(f / "sub" / "key.html")


def _fifo(f: Path) -> None:
    os.mkfifo(f / "pipe")
    give(f / "pipe")


def _hard_link_to_anothers(f: Path) -> None:
    os.link(f.parent.parent / "answer_key.py", f / "linked")  # stays root's


def _bytes(f: Path) -> None:
    (f / "more").write_text("x" * 1000)
    give(f / "more")


def _files(f: Path) -> None:
    for i in range(100):
        (f / f"n{i}").write_text("")
        give(f / f"n{i}")


@pytest.mark.parametrize(
    "make, reason",
    [
        (_symlink, "sub/key.html is a symbolic link"),
        (_fifo, "pipe is a pipe"),
        (_hard_link_to_anothers, "linked belongs to root, not to the student it names"),
        (_bytes, "more than 1000 bytes"),
        (_files, "more than 100 files and folders"),
    ],
    ids=["symlink", "fifo", "hard-link-to-roots", "bytes", "files"],
)
def test_anything_else_refuses_the_whole_submission(inbound, make, reason):
    (inbound.folder.parent.parent / "answer_key.py").write_text("KEY = 1\n")  # the instructor's
    make(inbound.folder)
    told = refused(inbound)
    assert reason in told, told


def test_an_entry_that_is_a_link_or_anothers_is_refused(inbound):
    (inbound.folder.parent / "l").symlink_to(inbound.folder)
    assert "not a folder" in refused(lambda **c: inbound(name="l", **c))
    inbound(name="s")  # the student's own is fine
    os.chown(inbound.folder, 0, -1)  # now root's
    fd = os.open(inbound.folder.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with pytest.raises(SubmissionRefused, match="the folder belongs to root"):
            read_submission(fd, "s", pwd.getpwnam("nobody").pw_uid, max_files=9, max_bytes=99)
    finally:
        os.close(fd)


def test_a_file_that_grows_past_the_cap_while_read_is_refused(inbound, monkeypatch):
    import attnlab.grading.exchange as exchange

    real_fstat = os.fstat

    def grown(fd):  # the size seen at first is small; the bytes read are more
        info = real_fstat(fd)
        return os.stat_result((*info[:6], min(info.st_size, 1), *info[7:]))

    monkeypatch.setattr(exchange.os, "fstat", grown)
    (inbound.folder / "big").write_text("y" * 2000)
    give(inbound.folder / "big")
    assert "more bytes than the cap" in refused(inbound)
    assert Path(inbound.folder / "big").stat().st_size == 2000


def _course(tmp_path: Path):
    from nbgrader.coursedir import CourseDirectory

    course, exchange = tmp_path / "course", tmp_path / "exchange"
    course.mkdir()
    (exchange / "attnlab" / "inbound").mkdir(parents=True)
    exchange.chmod(0o777)
    coursedir = CourseDirectory(root=str(course), course_id="attnlab", assignment_id="a1")
    return course, exchange, coursedir


def test_collect_skips_a_bad_entry_and_dates_the_rest_by_the_file_system(tmp_path):
    from attnlab.grading.exchange import VerifiedCollect

    course, exchange, coursedir = _course(tmp_path)
    inbound = exchange / "attnlab" / "inbound"
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    entries = {
        "s1+a1+2000-01-01 00:00:00.000000 UTC+r": {"timestamp.txt": "2000-01-01 00:00:00 UTC"},
        "s2+a1+2099-01-01 00:00:00.000000 UTC+r": {},  # later than the file system: counts
        "s3+a1+2000-01-01 00:00:00.000000 UTC+r": {"timestamp.txt/x": ""},  # a folder
        "s4+a1+not-a-time+r": {},
        "..+a1+2000-01-01 00:00:00.000000 UTC+r": {},
    }
    for name, files in entries.items():
        (inbound / name).mkdir()
        (inbound / name / "a1.ipynb").write_text("{}")
        for relative, text in files.items():
            (inbound / name / relative).parent.mkdir(exist_ok=True)
            (inbound / name / relative).write_text(text)
    collect = VerifiedCollect(coursedir=coursedir, root=str(exchange), check_owner=False)
    collect.start()  # as root, every entry is root's own: check_owner off, one owner each
    collected = sorted(p.name for p in (course / "submitted").iterdir())
    assert collected == ["s1", "s2"]
    s1 = (course / "submitted" / "s1" / "a1" / "timestamp.txt").read_text()
    assert parse_utc(s1) >= before  # not the year 2000 its timestamp.txt and name claim
    s2 = (course / "submitted" / "s2" / "a1" / "timestamp.txt").read_text()
    assert parse_utc(s2).year == 2099
    assert not (course / "a1").exists()  # the ".." entry wrote nothing outside submitted/


def test_release_feedback_releases_only_the_assignments_notebooks(tmp_path):
    from nbgrader.api import Gradebook

    from attnlab.grading.exchange import VerifiedReleaseFeedback

    course, exchange, coursedir = _course(tmp_path)
    with Gradebook(coursedir.db_url, "attnlab") as gb:
        gb.update_or_create_assignment("a1")
        gb.add_notebook("nb", "a1")
    (tmp_path / "key.py").write_text("KEY")
    for student, files in {
        "s1": {"nb.html": "mine", "key.html": "KEY", "submission_secret.txt": "k1"},
        "s2": {"nb.html": "theirs"},  # no submission_secret.txt: skipped, the class goes on
        "s3": {"submission_secret.txt": "k3"},
    }.items():
        folder = course / "feedback" / student / "a1"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00 UTC")
        for name, text in files.items():
            (folder / name).write_text(text)
    (course / "feedback" / "s3" / "a1" / "nb.html").symlink_to(tmp_path / "key.py")
    VerifiedReleaseFeedback(coursedir=coursedir, root=str(exchange)).start()
    released = {p.name: p.read_text() for p in (exchange / "attnlab" / "feedback").iterdir()}
    assert released == {f"{notebook_hash(secret='k1', notebook_id='nb')}.html": "mine"}
