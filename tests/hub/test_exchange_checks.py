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
