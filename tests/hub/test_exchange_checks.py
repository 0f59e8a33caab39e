"""What the course's collect accepts from an inbound entry, case by case (fast; needs root).

attnlab.grading.exchange.read_submission reads a submission through descriptors it checks:
these cases give it one folder each, owned by the unprivileged user ``nobody`` (the student),
and show what it refuses and why. The whole flow with real Unix users and stock nbgrader is
tests/hub/test_exchange_attacks.py.
"""

from __future__ import annotations

import datetime
import logging
import os
import pwd
import shutil
import time
import warnings
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
        (_bytes, "more than 1000 bytes"),
        (_files, "more than 100 files and folders"),
    ],
    ids=["symlink", "fifo", "bytes", "files"],
)
def test_anything_else_refuses_the_whole_submission(inbound, make, reason):
    (inbound.folder.parent.parent / "answer_key.py").write_text("KEY = 1\n")  # the instructor's
    make(inbound.folder)
    told = refused(inbound)
    assert reason in told, told


def test_what_another_user_put_in_a_students_folder_is_passed_over_unread(inbound):
    # W5: stock submit leaves each inbound entry writable by all; a hard link to another user's
    # file is that user's too. Passed over (never read), the student's own still collected.
    key = inbound.folder.parent.parent / "answer_key.py"
    key.write_text("KEY = 1\n")
    os.link(key, inbound.folder / "sub" / "linked")  # stays root's
    (inbound.folder / "theirs.html").symlink_to(key)  # a classmate's (root's) link
    (inbound.folder / "junk").mkdir()  # a classmate's folder: not descended into
    (inbound.folder / "junk" / "x").write_text("x" * 5000)
    found = inbound()
    assert found.files == {"a.ipynb": b"{}", "sub/data.txt": b"x" * 10}
    assert sorted(found.ignored) == ["junk (root)", "sub/linked (root)", "theirs.html (root)"]
    (inbound.folder / "mine.html").symlink_to(key)
    give(inbound.folder / "mine.html")  # the student's own link still refuses it all
    assert "mine.html is a symbolic link" in refused(inbound)


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


@pytest.fixture(scope="module", autouse=True)
def _gradebook(tmp_path_factory):
    """One gradebook (assignment a1, notebook nb) made once and copied: each takes seconds."""
    from nbgrader.api import Gradebook

    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(f"sqlite:///{path}", "attnlab") as gb:
        gb.update_or_create_assignment("a1")
        gb.add_notebook("nb", "a1")
    GRADEBOOK.append(path)
    yield
    GRADEBOOK.clear()


GRADEBOOK: list[Path] = []


def _course(tmp_path: Path):
    from nbgrader.coursedir import CourseDirectory

    course, exchange = tmp_path / "course", tmp_path / "exchange"
    course.mkdir()
    shutil.copyfile(GRADEBOOK[0], course / "gradebook.db")
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
    from attnlab.grading.exchange import VerifiedReleaseFeedback

    course, exchange, coursedir = _course(tmp_path)
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


def _collect(tmp_path: Path, entries: dict[str, dict[str, str]], **traits):
    """A VerifiedCollect of ``entries`` (name -> {relative path: text}), made as root."""
    from attnlab.grading.exchange import VerifiedCollect

    course, exchange, coursedir = _course(tmp_path)
    inbound = exchange / "attnlab" / "inbound"
    for name, files in entries.items():
        (inbound / name).mkdir()
        for relative, text in {"a1.ipynb": "{}", **files}.items():
            (inbound / name / relative).parent.mkdir(exist_ok=True)
            (inbound / name / relative).write_text(text)
    traits.setdefault("check_owner", False)  # as root, every entry is root's own
    log = logging.getLogger("attnlab.tests.exchange")
    collect = VerifiedCollect(coursedir=coursedir, root=str(exchange), log=log, **traits)
    return collect, course / "submitted", inbound


def _warned(caplog) -> str:
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


ON_TIME = "2000-01-01 00:00:00.000000 UTC"


def test_w1_a_time_zone_dateutil_raises_on_skips_only_that_entry(tmp_path, caplog):
    # W1: "..+x" in the name: parse_utc -> dateutil.tz.gettz("..") -> DeprecatedTzKeyWarning,
    # made an error by dateutil's own warnings filter; it stopped collect for the whole class
    collect, submitted, _ = _collect(
        tmp_path,
        {
            "aa+a1+2026-12-06 18:00:00 ..+x": {},
            f"s1+a1+{ON_TIME}+r": {},
            f"s2+a1+{ON_TIME}+r": {},
        },
    )
    filters = list(warnings.filters)
    collect.start()
    assert sorted(p.name for p in submitted.iterdir()) == ["s1", "s2"]
    assert "'2026-12-06 18:00:00 ..' in its name is not a time" in _warned(caplog)
    assert warnings.filters == filters  # dateutil's "error" filter did not outlive the parse
    from attnlab.grading.exchange import parse_time

    with pytest.raises(ValueError, match="text: '2026-12-06 18:00:00 ..' is not a time"):
        parse_time("2026-12-06 18:00:00 ..")


def test_w1_a_name_of_no_student_is_refused_by_its_owner_before_its_time_is_read(tmp_path, caplog):
    collect, submitted, _ = _collect(
        tmp_path, {"nosuchstudent+a1+2026-12-06 18:00:00 ..+x": {}}, check_owner=True
    )
    collect.start()
    assert not submitted.exists()
    assert "there is no Unix user 'nosuchstudent'" in _warned(caplog)


def test_w2_a_timestamp_txt_dateutil_raises_on_is_passed_over(tmp_path, caplog):
    # W2: the same time in the student's own timestamp.txt stopped everyone after them
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    collect, submitted, _ = _collect(
        tmp_path,
        {
            f"aa+a1+{ON_TIME}+r": {"timestamp.txt": "2026-12-06 18:00:00 .."},
            f"s1+a1+{ON_TIME}+r": {},
        },
    )
    collect.start()
    assert sorted(p.name for p in submitted.iterdir()) == ["aa", "s1"]
    stamp = (submitted / "aa" / "a1" / "timestamp.txt").read_text()
    assert parse_utc(stamp) >= before  # the file system's time, not the text


def test_any_error_in_one_entry_skips_only_that_entry(tmp_path, caplog, monkeypatch):
    import attnlab.grading.exchange as exchange

    real = exchange.read_submission

    def failing(dir_fd, name, *args, **kwargs):
        if name.startswith("aa+"):
            raise RuntimeError("unforeseen")
        return real(dir_fd, name, *args, **kwargs)

    monkeypatch.setattr(exchange, "read_submission", failing)
    collect, submitted, _ = _collect(tmp_path, {f"aa+a1+{ON_TIME}+r": {}, f"s1+a1+{ON_TIME}+r": {}})
    collect.start()
    assert [p.name for p in submitted.iterdir()] == ["s1"]
    assert "aa+a1+" in _warned(caplog) and "RuntimeError: unforeseen" in _warned(caplog)


def test_a_flood_of_entries_reads_only_each_students_newest(tmp_path, caplog, monkeypatch):
    # 100,000 entries of one student would add ~17 min to collect: only the newest 20 are read;
    # entries named as the student but not theirs (root's here) are refused by their owner
    # first, so they cannot push the student's own out by claiming a later time
    import attnlab.grading.exchange as exchange

    read = []
    real = exchange.read_submission
    monkeypatch.setattr(
        exchange,
        "read_submission",
        lambda fd, name, *a, **k: read.append(name) or real(fd, name, *a, **k),
    )
    forged = {f"nobody+a1+2099-01-01 00:00:{i:02}.000000 UTC+f": {} for i in range(25)}
    own = {f"nobody+a1+2001-01-01 00:00:{i:02}.000000 UTC+r": {"n.txt": str(i)} for i in range(25)}
    collect, submitted, inbound = _collect(tmp_path, {**forged, **own}, check_owner=True)
    for name in own:  # made in order: the last is the newest by its change time
        give(inbound / name, *(inbound / name).rglob("*"))
        time.sleep(0.002)
    collect.start()
    assert len(read) == 20 + 1 and set(read) <= set(own)  # 20 listed, the newest read to copy
    assert (submitted / "nobody" / "a1" / "n.txt").read_text() == "24"
    assert "Skipping 5 older entries of nobody" in _warned(caplog)
    assert _warned(caplog).count("the folder belongs to root") == 25


def _feedback(tmp_path: Path, secrets: dict[str, str]):
    from attnlab.grading.exchange import VerifiedReleaseFeedback

    course, exchange, coursedir = _course(tmp_path)
    for student, secret in secrets.items():
        folder = course / "feedback" / student / "a1"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text("2026-01-01 00:00:00 UTC")
        (folder / "submission_secret.txt").write_text(secret)
        (folder / "nb.html").write_text(f"{student}'s feedback")
    log = logging.getLogger("attnlab.tests.exchange")
    VerifiedReleaseFeedback(coursedir=coursedir, root=str(exchange), log=log).start()
    return {p.name: p.read_text() for p in (exchange / "attnlab" / "feedback").iterdir()}


def test_w3_an_empty_secret_skips_only_that_student(tmp_path, caplog):
    # W3: notebook_hash(secret="") failed an assert: no feedback for anyone after the student
    released = _feedback(tmp_path, {"s1": "", "s2": "k2"})
    assert released == {f"{notebook_hash(secret='k2', notebook_id='nb')}.html": "s2's feedback"}
    assert "submission_secret.txt is blank" in _warned(caplog)


def test_w4_students_sharing_a_secret_get_no_feedback_rather_than_each_others(tmp_path, caplog):
    # W4: s2 copied s1's submission_secret.txt: one file name for both, the later written last
    released = _feedback(tmp_path, {"s1": "same", "s2": "same", "s3": "k3"})
    assert released == {f"{notebook_hash(secret='k3', notebook_id='nb')}.html": "s3's feedback"}
    told = _warned(caplog)
    assert "s1's submission_secret.txt is the same as another" in told
    assert "s2's submission_secret.txt is the same as another" in told
