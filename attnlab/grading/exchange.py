"""nbgrader's shared-folder exchange, with who submitted and when decided by the file system.

In nbgrader's shared-folder exchange (``/srv/nbgrader/exchange`` on The Littlest JupyterHub) any
student may create entries in the course's ``inbound`` folder, and stock ``nbgrader collect``
believes what they say: the student id and the time in the entry's *name*, the time in its
``timestamp.txt``, and whatever its files point to (``shutil.copytree`` follows symbolic links,
so a submission of links to the instructor's answer keys was collected, graded and released
back as "feedback"). :class:`VerifiedCollect` collects only what the student it names owns and
wrote, at the time the file system recorded:

* **Who.** Every inbound entry is opened without following links (``O_NOFOLLOW``) and checked
  on the opened descriptor (``fstat``, so nothing can be swapped in between): the entry, every
  folder and every file in it must belong to the Unix user the entry's name claims (on The
  Littlest JupyterHub a student id *is* the Unix account, ``jupyter-<hub user>``), and hold
  only regular files and folders (no links, pipes or sockets; a hard link to another user's
  file has that user as its owner). Where ``ExchangeCollect.check_owner`` is off (one Unix user
  for every student, so names cannot be checked) the entry must still be one owner's alone.
* **When.** The submission's time is the latest *change time* (``st_ctime``) of the entry and
  of everything in it: the kernel sets it on every write, rename or ``chmod``, and no user can
  set it back. The time in the name or in ``timestamp.txt`` counts only when it is later (a
  student can only make themselves later). The time is written into the collected
  ``timestamp.txt``, which ``autograde`` reads for late penalties.
* **How much.** At most :attr:`VerifiedCollect.max_files` entries and
  :attr:`VerifiedCollect.max_bytes` bytes per submission (100 and 50 MB unless configured):
  nbgrader's own file walk is quadratic, and a submission of 20,000 tiny files held the one
  process that grades the class for minutes.
* **Never the whole class.** An entry that fails any of this (a malformed name, a foreign
  owner, a link, too many files) is skipped with a warning naming it and the reason; every
  other student is collected and the command succeeds.

The copy is made from the same descriptors that were checked, so the instructor's collect reads
nothing but the student's own bytes. :class:`VerifiedReleaseFeedback` releases, for each
student, only the feedback of the assignment's own notebooks (as the gradebook lists them),
from regular files in the instructor's course, and nothing else the feedback folder holds.

Only the instructor's nbgrader uses this module (``deploy/nbgrader/instructor/nbgrader_config.py``
sets ``ExchangeFactory.collect`` and ``ExchangeFactory.release_feedback``); students' ``fetch``,
``submit`` and ``fetch_feedback`` are nbgrader's own. docs/jupyterhub.md, "Who submitted, and
when", says what this protects and what it does not.
"""

from __future__ import annotations

import datetime
import errno
import fnmatch
import glob
import os
import pwd
import shutil
import stat
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import check_mode, notebook_hash, parse_utc
from traitlets import Integer

__all__ = ["SubmissionRefused", "VerifiedCollect", "VerifiedReleaseFeedback", "read_submission"]

# Opened for reading only; never through a symbolic link; a FIFO does not block the open.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_OPEN_DIR = _OPEN_FILE | os.O_DIRECTORY
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's own, in UTC (parse_utc reads it)


class SubmissionRefused(ValueError):
    """A submission that is not collected; the message says why."""


@dataclass
class Submission:
    """One inbound entry as read through checked descriptors.

    Attributes
    ----------
    files : dict
        Relative path (``/``-separated) -> the file's bytes; folders are implied by the paths,
        and ``folders`` lists every folder (also empty ones).
    changed : datetime.datetime
        The latest change time (``st_ctime``) seen on the entry and everything in it, naive UTC.
    """

    owner: int
    files: dict[str, bytes] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    changed: datetime.datetime = datetime.datetime.min
    n_bytes: int = 0


def _utc(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def read_submission(
    dir_fd: int,
    name: str,
    owner: int | None,
    *,
    max_files: int,
    max_bytes: int,
    ignore: list[str] = (),
    read: bool = True,
) -> Submission:
    """Read the submission folder ``name`` in the open folder ``dir_fd``, checked as it is read.

    Parameters
    ----------
    dir_fd : int
        An open descriptor of the folder holding the entry (the exchange's ``inbound``).
    name : str
        The entry's name in it.
    owner : int or None
        The uid everything must belong to; None: the entry's own owner.
    max_files, max_bytes : int
        The most entries (files and folders, below the entry) and file bytes accepted.
    ignore : list of str
        File-name globs passed over (nbgrader's ``CourseDirectory.ignore``), not read or counted.
    read : bool
        Read the files' bytes (False: check and count only).

    Returns
    -------
    Submission

    Raises
    ------
    SubmissionRefused
        The entry is not a folder, not ``owner``'s, holds anything but folders and regular
        files of ``owner``'s, is over a cap, or cannot be read.
    """
    try:
        top = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise SubmissionRefused("it is not a folder (a symbolic link or a file)") from None
        raise SubmissionRefused(f"it cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(top)
        found = Submission(owner=info.st_uid if owner is None else owner)
        _check_owner(info, found.owner, "the folder")
        _read_folder(top, "", found, max_files, max_bytes, list(ignore), read)
    finally:
        os.close(top)
    return found


def _check_owner(info: os.stat_result, owner: int, where: str) -> None:
    if info.st_uid != owner:
        try:
            whose = pwd.getpwuid(info.st_uid).pw_name
        except KeyError:
            whose = f"uid {info.st_uid}"
        raise SubmissionRefused(f"{where} belongs to {whose}, not to the student it names")


def _read_folder(fd, prefix, found, max_files, max_bytes, ignore, read) -> None:
    count = len(found.files) + len(found.folders)
    names = []
    with os.scandir(fd) as listing:  # stops at the cap: a folder of millions is not listed
        for item in listing:
            if not any(fnmatch.fnmatch(item.name, pattern) for pattern in ignore):
                names.append(item.name)
                if count + len(names) > max_files:
                    raise SubmissionRefused(f"it holds more than {max_files} files and folders")
    for entry in sorted(names):
        where = prefix + entry
        count += 1
        if count > max_files:
            raise SubmissionRefused(f"it holds more than {max_files} files and folders")
        try:
            child = os.open(entry, _OPEN_FILE, dir_fd=fd)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise SubmissionRefused(f"{where} is a symbolic link") from None
            raise SubmissionRefused(f"{where} cannot be opened ({error.strerror})") from None
        try:
            info = os.fstat(child)
            _check_owner(info, found.owner, where)
            if stat.S_ISDIR(info.st_mode):
                found.folders.append(where)
                _read_folder(child, where + "/", found, max_files, max_bytes, ignore, read)
                count = len(found.files) + len(found.folders)
            elif stat.S_ISREG(info.st_mode):
                found.n_bytes += info.st_size
                if found.n_bytes > max_bytes:
                    raise SubmissionRefused(f"it holds more than {max_bytes} bytes")
                data = b""
                if read:
                    data = _read_capped(child, max_bytes - (found.n_bytes - info.st_size), where)
                    found.n_bytes += len(data) - info.st_size
                    info = os.fstat(child)  # after reading: a write during it is seen
                found.files[where] = data
            else:
                raise SubmissionRefused(f"{where} is {_kind(info.st_mode)}")
            found.changed = max(found.changed, _utc(info.st_ctime))
        finally:
            os.close(child)
    found.changed = max(found.changed, _utc(os.fstat(fd).st_ctime))  # after listing it


def _read_capped(fd: int, budget: int, where: str) -> bytes:
    os.set_blocking(fd, True)
    chunks, total = [], 0
    while chunk := os.read(fd, 1 << 20):
        total += len(chunk)
        if total > budget:
            raise SubmissionRefused(f"{where} makes it hold more bytes than the cap")
        chunks.append(chunk)
    return b"".join(chunks)


class VerifiedCollect(ExchangeCollect):
    """``nbgrader collect`` taking who and when from the file system (module docstring)."""

    max_files = Integer(
        100,
        help="The most files and folders one submission may hold; a larger one is skipped.",
    ).tag(config=True)

    max_bytes = Integer(
        50 * 2**20,
        help="The most bytes one submission's files may hold; a larger one is skipped.",
    ).tag(config=True)

    def _refuse(self, name: str, reason: str) -> None:
        self.log.warning("Skipping %s in %s: %s.", name, self.inbound_path, reason)

    def _owner_uid(self, student_id: str) -> int | None:
        """The uid that must own ``student_id``'s submission (None: any one owner)."""
        if not self.check_owner:
            return None
        try:
            return pwd.getpwnam(student_id).pw_uid
        except KeyError:
            raise SubmissionRefused(f"there is no Unix user {student_id!r}") from None

    def _parse_name(self, name: str) -> tuple[str, datetime.datetime]:
        parts = name.rsplit("+", 3)
        if len(parts) == 4:
            student_id, assignment_id, stamp, _ = parts
        elif len(parts) == 3:
            student_id, assignment_id, stamp = parts
        else:
            raise SubmissionRefused("its name is not <student>+<assignment>+<time>+<random>")
        if assignment_id != self.coursedir.assignment_id:
            raise SubmissionRefused("it is another assignment's")
        if not student_id or student_id.startswith(".") or os.sep in student_id:
            raise SubmissionRefused(f"{student_id!r} is not a student id")
        try:
            named = parse_utc(stamp)
        except (ValueError, OverflowError, TypeError):
            raise SubmissionRefused(f"{stamp!r} in its name is not a time") from None
        return student_id, named

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        wanted = self.coursedir.student_id if self.coursedir.student_id not in ("", "*") else None
        prefix = f"+{self.coursedir.assignment_id}+"
        records = []
        inbound = os.open(self.inbound_path, _OPEN_DIR)
        try:
            for name in sorted(os.listdir(inbound)):
                if prefix not in name:
                    continue  # another assignment's (or not a submission at all)
                try:
                    student_id, named = self._parse_name(name)
                    if wanted and student_id != wanted:
                        continue
                    found = read_submission(
                        inbound,
                        name,
                        self._owner_uid(student_id),
                        max_files=self.max_files,
                        max_bytes=self.max_bytes,
                        ignore=self.coursedir.ignore,
                        read=False,
                    )
                except SubmissionRefused as refused:
                    self._refuse(name, str(refused))
                    continue
                # the latest of the file system's time and the names' (which only make it later)
                when = max(found.changed, named)
                records.append({"username": student_id, "filename": name, "timestamp": when})
        finally:
            os.close(inbound)
        by_student = defaultdict(list)
        for record in records:
            by_student[record["username"]].append(record)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                self.duedate = gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for mine in by_student.values():
            mine = self._sort_by_timestamp(mine)
            if self.duedate is not None and self.before_duedate:
                on_time = [r for r in mine if r["timestamp"] <= self.duedate]
                mine = on_time or mine
            self.src_records.append(mine[0])

    def copy_files(self):
        if not self.src_records:
            self.log.warning(
                "No submissions of '%s' for course '%s' to collect",
                self.coursedir.assignment_id,
                self.coursedir.course_id,
            )
        else:
            self.log.info(
                "Processing %d submissions of '%s' for course '%s'",
                len(self.src_records),
                self.coursedir.assignment_id,
                self.coursedir.course_id,
            )
        for record in self.src_records:
            try:
                self._collect_one(record)
            except SubmissionRefused as refused:
                self._refuse(record["filename"], str(refused))
            except OSError as error:  # this student's alone: the class goes on
                self._refuse(record["filename"], f"it could not be collected ({error})")

    def _collect_one(self, record: dict) -> None:
        student_id, assignment_id = record["username"], self.coursedir.assignment_id
        dest = self.coursedir.format_path(
            self.coursedir.submitted_directory, student_id, assignment_id
        )
        if os.path.isdir(dest):
            existing = self.coursedir.get_existing_timestamp(dest)
            newer = existing is None or record["timestamp"] > existing
            if not (
                (self.update and newer) or (self.before_duedate and existing != record["timestamp"])
            ):
                self.log.info(
                    "%s: %s %s",
                    "No newer submission to collect"
                    if self.update
                    else "Submission already exists, use --update to update",
                    student_id,
                    assignment_id,
                )
                return
        inbound = os.open(self.inbound_path, _OPEN_DIR)
        try:  # read again, through the descriptors checked as it is read: this is what is kept
            found = read_submission(
                inbound,
                record["filename"],
                self._owner_uid(student_id),
                max_files=self.max_files,
                max_bytes=self.max_bytes,
                ignore=self.coursedir.ignore,
            )
        finally:
            os.close(inbound)
        when = max(found.changed, record["timestamp"])
        claimed = found.files.get("timestamp.txt", b"").decode("utf-8", "replace").strip()
        try:
            claimed_time = parse_utc(claimed) if claimed else None
        except (ValueError, OverflowError, TypeError):
            claimed_time = None
        if claimed_time is not None and claimed_time > when:
            when = claimed_time
        elif claimed and claimed_time != when:
            self.log.info(
                "%s: its timestamp.txt says %r; the file system says it was last changed at %s "
                "(used)",
                record["filename"],
                claimed,
                when.strftime(_TIME_FORMAT),
            )
        if "timestamp.txt" in found.folders:
            raise SubmissionRefused("its timestamp.txt is a folder")
        found.files["timestamp.txt"] = when.strftime(_TIME_FORMAT).encode()
        self._write(found, dest, student_id)

    def _write(self, found: Submission, dest: str, student_id: str) -> None:
        parent = os.path.dirname(dest)
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".collecting-", dir=parent)
        try:
            for folder in found.folders:
                os.makedirs(os.path.join(staging, *folder.split("/")), exist_ok=True)
            for relative, data in found.files.items():
                path = os.path.join(staging, *relative.split("/"))
                with open(path, "xb") as out:
                    out.write(data)
            os.chmod(staging, 0o755)
            if os.path.isdir(dest):
                self.log.info(
                    "Updating submission: %s %s", student_id, self.coursedir.assignment_id
                )
                shutil.rmtree(dest)
            else:
                self.log.info(
                    "Collecting submission: %s %s", student_id, self.coursedir.assignment_id
                )
            os.rename(staging, dest)
        finally:
            if os.path.isdir(staging):
                shutil.rmtree(staging)


class VerifiedReleaseFeedback(ExchangeReleaseFeedback):
    """``nbgrader release_feedback`` releasing only the assignment's notebooks' feedback.

    Stock nbgrader releases every ``*.html`` in a student's feedback folder, whatever made it.
    This releases ``<notebook>.html`` for the notebooks the gradebook lists for the assignment,
    and only when it is a regular file of the instructor's own (not a link); anything else is
    passed over with a warning.
    """

    def copy_files(self):
        if self.coursedir.student_id_exclude:
            excluded = set(self.coursedir.student_id_exclude.split(","))
        else:
            excluded = set()
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                assignment = gb.find_assignment(self.coursedir.assignment_id)
                names = {notebook.name for notebook in assignment.notebooks}
            except MissingEntry:
                names = set()
        me = os.geteuid()
        for html in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            folder = os.path.dirname(html)  # <course>/feedback/<student>/<assignment>
            student_id = os.path.basename(os.path.dirname(folder))
            notebook_id = os.path.splitext(os.path.basename(html))[0]
            if student_id in excluded:
                continue
            reason = None
            if notebook_id not in names:
                reason = "it is not the feedback of one of the assignment's notebooks"
            else:
                for path in (os.path.dirname(folder), folder, html):
                    info = os.lstat(path)
                    if stat.S_ISLNK(info.st_mode) or info.st_uid != me:
                        reason = f"{path} is a link or not the instructor's own"
                        break
            if reason:
                self.log.warning("Not releasing %s: %s.", html, reason)
                continue
            try:  # submission_secret.txt came with the submission: a student may leave it out
                with open(os.path.join(folder, "timestamp.txt")) as fh:
                    timestamp = fh.read()
                with open(os.path.join(folder, "submission_secret.txt")) as fh:
                    secret = fh.read()
            except (OSError, UnicodeDecodeError) as error:
                self.log.warning("Not releasing %s: %s.", html, error)
                continue
            checksum = notebook_hash(secret=secret, notebook_id=notebook_id)
            temporary = os.path.join(self.dest_path, f"{checksum}-tmp.html")
            self.log.info(
                "Releasing feedback for student '%s' on assignment '%s/%s/%s' (%s)",
                student_id,
                self.coursedir.course_id,
                self.coursedir.assignment_id,
                notebook_id,
                timestamp,
            )
            shutil.copyfile(html, temporary, follow_symlinks=False)
            os.chmod(temporary, 0o644)
            os.replace(temporary, os.path.join(self.dest_path, f"{checksum}.html"))


def _ngshare_collect():
    """:class:`VerifiedCollect`'s cap for ngshare's collect (Zero to JupyterHub).

    ngshare itself decides who submitted (the hub user of the request's token) and when (its own
    clock; ngshare-exchange writes that time as the collected ``timestamp.txt``, over any the
    student uploaded), and a submission there is only the bytes the student's server uploaded.
    What it does not do is cap a submission: this collect lists each student's latest
    submission first (``list_only``, no content) and passes over, with a warning, one of more
    than ``max_files`` files, keeping what was collected before; a submission that grows past
    the cap between that listing and its download is not written either.
    """
    from ngshare_exchange.collect import ExchangeCollect as NgshareExchangeCollect

    class NgshareCollect(NgshareExchangeCollect):
        max_files = Integer(
            100,
            help="The most files one submission may hold; a larger one is not collected.",
        ).tag(config=True)

        def _files_in(self, student_id: str) -> int | None:
            listing = self.ngshare_api_get(
                f"/submission/{self.coursedir.course_id}/{self.coursedir.assignment_id}/"
                f"{student_id}",
                params={"list_only": "true"},
            )
            return None if listing is None else len(listing["files"])

        def _over(self, student_id: str, count: int) -> None:
            self.log.warning(
                "Skipping %s's submission of %s: it holds %d files, more than %d.",
                student_id,
                self.coursedir.assignment_id,
                count,
                self.max_files,
            )

        def init_src(self):
            super().init_src()
            kept = []
            for record in self.src_records:
                count = self._files_in(record["student_id"])
                if count is not None and count > self.max_files:
                    self._over(record["student_id"], count)
                else:
                    kept.append(record)
            self.src_records = kept

        def _get_submission(self, course_id, assignment_id, student_id):
            submission = super()._get_submission(course_id, assignment_id, student_id)
            if submission is not None and len(submission["files"]) - 1 > self.max_files:
                self._over(student_id, len(submission["files"]) - 1)  # -1: its timestamp.txt
                return None
            return submission

    return NgshareCollect


def __getattr__(name: str):
    # ngshare_exchange is installed on Zero to JupyterHub only: its collect is made on demand
    # (nbgrader imports "attnlab.grading.exchange.NgshareCollect" by name)
    if name == "NgshareCollect":
        globals()[name] = _ngshare_collect()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
