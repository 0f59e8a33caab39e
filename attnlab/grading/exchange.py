"""nbgrader's shared-folder exchange, with who submitted and when decided by the file system.

In nbgrader's shared-folder exchange (``/srv/nbgrader/exchange`` on The Littlest JupyterHub) any
student may create entries in the course's ``inbound`` folder, and stock ``nbgrader collect``
believes what they say: the student id and the time in the entry's *name*, the time in its
``timestamp.txt``, and whatever its files point to (``shutil.copytree`` follows symbolic links,
so a submission of links to the instructor's answer keys was collected, graded and released
back as "feedback"). :class:`VerifiedCollect` collects only what the student it names owns and
wrote, at the time the file system recorded:

* **Who.** Every inbound entry is opened without following links (``O_NOFOLLOW``) and checked
  on the opened descriptor (``fstat``, so nothing can be swapped in between): the entry must
  belong to the Unix user its name claims (on The Littlest JupyterHub a student id *is* the
  Unix account, ``jupyter-<hub user>``), checked before anything else in its name is read, and
  hold only regular files and folders of theirs (no links, pipes or sockets). Anything in it
  that is another user's (a hard link to another user's file has that user as its owner; stock
  ``nbgrader submit`` leaves each entry writable by all, so a classmate may add to it) is
  passed over unread, with a warning, and the rest collected. Where
  ``ExchangeCollect.check_owner`` is off (one Unix user for every student, so names cannot be
  checked) the entry's own owner stands for the student.
* **When.** The submission's time is the latest *change time* (``st_ctime``) of the entry and
  of everything in it: the kernel sets it on every write, rename or ``chmod``, and no user can
  set it back. The time in the name or in ``timestamp.txt`` counts only when it is later (a
  student can only make themselves later). The time is written into the collected
  ``timestamp.txt``, which ``autograde`` reads for late penalties.
* **How much.** At most :attr:`VerifiedCollect.max_files` entries and
  :attr:`VerifiedCollect.max_bytes` bytes per submission (100 and 50 MB unless configured):
  nbgrader's own file walk is quadratic, and a submission of 20,000 tiny files held the one
  process that grades the class for minutes.
* **How many.** At most :attr:`VerifiedCollect.max_entries` (20) entries per student are
  considered, the newest (by the later of the time in the name and the entry's change time);
  the older are skipped with one warning per student. An entry named as another student but
  not theirs is refused by its owner before it can push that student's own out.
* **Never the whole class.** An entry that fails any of this (a malformed name or time, a
  foreign owner, a link, too many files), or anything else that goes wrong with one entry
  (any exception, also a warning raised as an error, as python-dateutil does for a time zone
  such as ``..``: times are parsed by :func:`parse_time`), is skipped with a warning naming it
  and the reason; every other student is collected and the command succeeds.

The copy is made from the same descriptors that were checked, so the instructor's collect reads
nothing but the student's own bytes. :class:`VerifiedReleaseFeedback` releases, for each
student, only the feedback of the assignment's own notebooks (as the gradebook lists them),
from regular files in the instructor's course, and nothing else the feedback folder holds; a
student whose ``submission_secret.txt`` is blank or the same as another's gets none (with a
warning), and one student's trouble never stops the others'.

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
import warnings
from collections import defaultdict
from dataclasses import dataclass, field

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import check_mode, notebook_hash, parse_utc
from traitlets import Integer

__all__ = [
    "SubmissionRefused",
    "VerifiedCollect",
    "VerifiedReleaseFeedback",
    "parse_time",
    "read_submission",
]

# Opened for reading only; never through a symbolic link; a FIFO does not block the open.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_OPEN_DIR = _OPEN_FILE | os.O_DIRECTORY
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"  # nbgrader's own, in UTC (parse_utc reads it)


class SubmissionRefused(ValueError):
    """A submission that is not collected; the message says why."""


def _why(error: BaseException) -> str:
    """An unexpected error in one student's entry, said in a warning (it skips only that entry)."""
    return f"{type(error).__name__}: {error}"


def parse_time(text: str) -> datetime.datetime:
    """``nbgrader.utils.parse_utc(text)``, any failure (or warning) raised as ValueError.

    ``parse_utc`` hands the time zone named in ``text`` to ``dateutil.tz.gettz``, which a
    student's text can make warn (``gettz("..")``: a key outside TZPATH) and which python-dateutil
    turns into an error by a warnings filter of its own, for the whole process. The parse runs
    under its own warnings filters (restored after, so dateutil's filter does not outlive it),
    with every warning an error, and whatever goes wrong is a ValueError naming ``text``.

    Parameters
    ----------
    text : str
        A time as nbgrader writes it (``2026-12-06 18:00:00.000000 UTC``).

    Returns
    -------
    datetime.datetime
        Naive UTC.

    Raises
    ------
    ValueError
        ``text`` is not a time parse_utc reads without a warning.
    """
    try:  # nbgrader's own format first: a flood of names costs a few microseconds each
        return datetime.datetime.strptime(text, _TIME_FORMAT)
    except ValueError:
        pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return parse_utc(text)
    except Exception as error:  # a Warning raised as an error is an Exception too
        raise ValueError(f"text: {text!r} is not a time ({type(error).__name__})") from None


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
    ignored : list of str
        ``"<path> (<owner>)"`` of each item below the entry that is not the student's (another
        user put it in their folder): passed over, never read, and the change time of the
        folder holding it not counted.
    """

    owner: int
    files: dict[str, bytes] = field(default_factory=dict)
    folders: list[str] = field(default_factory=list)
    changed: datetime.datetime = datetime.datetime.min
    n_bytes: int = 0
    ignored: list[str] = field(default_factory=list)


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
        The entry is not a folder or not ``owner``'s, holds anything of ``owner``'s but folders
        and regular files, is over a cap, or cannot be read. Items of another user's inside it
        are not refused but passed over unread (``Submission.ignored``).
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


def _whose(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _check_owner(info: os.stat_result, owner: int, where: str) -> None:
    if info.st_uid != owner:
        raise SubmissionRefused(
            f"{where} belongs to {_whose(info.st_uid)}, not to the student it names"
        )


def _read_folder(fd, prefix, found, max_files, max_bytes, ignore, read) -> None:
    count = len(found.files) + len(found.folders) + len(found.ignored)
    foreign = False  # another user's item here: this folder's change time is not the student's
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
                link = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                if link.st_uid != found.owner:  # a classmate's link in the student's folder
                    found.ignored.append(f"{where} ({_whose(link.st_uid)})")
                    foreign = True
                    continue
                raise SubmissionRefused(f"{where} is a symbolic link") from None
            raise SubmissionRefused(f"{where} cannot be opened ({error.strerror})") from None
        try:
            info = os.fstat(child)
            if info.st_uid != found.owner:  # never read: not the student's (see Submission)
                found.ignored.append(f"{where} ({_whose(info.st_uid)})")
                foreign = True
                continue
            if stat.S_ISDIR(info.st_mode):
                found.folders.append(where)
                _read_folder(child, where + "/", found, max_files, max_bytes, ignore, read)
                count = len(found.files) + len(found.folders) + len(found.ignored)
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
    if not foreign:
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

    max_entries = Integer(
        20,
        help="The most inbound entries of one student considered (the newest by the later of "
        "the time in the name and the entry's change time); older ones are skipped.",
    ).tag(config=True)

    def _refuse(self, name: str, reason: str) -> None:
        self.log.warning("Skipping %s in %s: %s.", name, self.inbound_path, reason)

    def _owner_uid(self, student_id: str) -> int | None:
        """The uid that must own ``student_id``'s submission (None: any one owner)."""
        if not self.check_owner:
            return None
        uids = self.__dict__.setdefault("_uids", {})  # one look-up per name, also in a flood
        if student_id not in uids:
            try:
                uids[student_id] = pwd.getpwnam(student_id).pw_uid
            except KeyError:
                uids[student_id] = None
        if uids[student_id] is None:
            raise SubmissionRefused(f"there is no Unix user {student_id!r}")
        return uids[student_id]

    def _parse_name(self, name: str) -> tuple[str, str]:
        """The student id and the (unparsed) time in an entry's name."""
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
        return student_id, stamp

    def _consider(self, inbound: int, name: str, wanted: str | None):
        """(student id, newest, time in the name) of an entry; its owner checked before its time."""
        student_id, stamp = self._parse_name(name)
        if wanted and student_id != wanted:
            return None
        owner = self._owner_uid(student_id)
        info = os.stat(name, dir_fd=inbound, follow_symlinks=False)
        if owner is not None:
            _check_owner(info, owner, "the folder")
        try:
            named = parse_time(stamp)
        except ValueError:
            raise SubmissionRefused(f"{stamp!r} in its name is not a time") from None
        return student_id, max(_utc(info.st_ctime), named), named

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
        candidates = defaultdict(list)  # student id -> [(newest, name, time in the name)]
        inbound = os.open(self.inbound_path, _OPEN_DIR)
        try:
            for name in sorted(os.listdir(inbound)):
                if prefix not in name:
                    continue  # another assignment's (or not a submission at all)
                try:  # anything that goes wrong is this entry's alone: the class goes on
                    seen = self._consider(inbound, name, wanted)
                except SubmissionRefused as refused:
                    self._refuse(name, str(refused))
                    continue
                except Exception as error:
                    self._refuse(name, f"it could not be read ({_why(error)})")
                    continue
                if seen is not None:
                    candidates[seen[0]].append((seen[1], name, seen[2]))
            for student_id, entries in sorted(candidates.items()):
                entries.sort(reverse=True)
                if len(entries) > self.max_entries:
                    self.log.warning(
                        "Skipping %d older entries of %s in %s: only the newest %d are considered.",
                        len(entries) - self.max_entries,
                        student_id,
                        self.inbound_path,
                        self.max_entries,
                    )
                for _, name, named in entries[: self.max_entries]:
                    try:
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
                    except Exception as error:
                        self._refuse(name, f"it could not be read ({_why(error)})")
                        continue
                    # the latest of the file system's time and the name's (only ever later)
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
            except Exception as error:  # this student's alone: the class goes on
                self._refuse(record["filename"], f"it could not be collected ({_why(error)})")

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
        if found.ignored:
            self.log.warning(
                "In %s, passed over (another user's, not read): %s.",
                record["filename"],
                ", ".join(found.ignored),
            )
        when = max(found.changed, record["timestamp"])
        claimed = found.files.get("timestamp.txt", b"").decode("utf-8", "replace").strip()
        try:
            claimed_time = parse_time(claimed) if claimed else None
        except ValueError:
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
    passed over with a warning. A student whose ``submission_secret.txt`` (it came with their
    submission) is missing, unreadable or blank, or is the same as another student's (one copied
    a classmate's), gets no feedback, with a warning naming them: the feedback's name in the
    exchange is a hash of the secret, so two students with one secret would share one file, the
    later written over the earlier. Anything that goes wrong with one student skips only them.
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
        releases = []
        for html in sorted(glob.glob(os.path.join(self.src_path, "*.html"))):
            try:  # anything that goes wrong is this student's alone: the class goes on
                found = self._checked(html, names, excluded)
            except Exception as error:
                self.log.warning("Not releasing %s: %s.", html, _why(error))
                continue
            if found is not None:
                releases.append(found)
        by_secret, by_name = defaultdict(set), defaultdict(set)
        for student_id, _, _, secret, checksum, _ in releases:
            by_secret[secret.strip()].add(student_id)
            by_name[checksum].add(student_id)
        shared = {
            student_id
            for sharing in (*by_secret.values(), *by_name.values())
            if len(sharing) > 1
            for student_id in sharing
        }
        for student_id, notebook_id, html, _, checksum, timestamp in releases:
            if student_id in shared:
                self.log.warning(
                    "Not releasing %s: %s's submission_secret.txt is the same as another "
                    "student's, so their feedback would share one file name.",
                    html,
                    student_id,
                )
                continue
            try:
                self._release(student_id, notebook_id, html, checksum, timestamp)
            except Exception as error:
                self.log.warning("Not releasing %s: %s.", html, _why(error))

    def _checked(self, html: str, names: set[str], excluded: set[str]):
        """(student, notebook, html, secret, file name, timestamp) to release, or None."""
        folder = os.path.dirname(html)  # <course>/feedback/<student>/<assignment>
        student_id = os.path.basename(os.path.dirname(folder))
        notebook_id = os.path.splitext(os.path.basename(html))[0]
        if student_id in excluded:
            return None
        if notebook_id not in names:
            reason = "it is not the feedback of one of the assignment's notebooks"
            self.log.warning("Not releasing %s: %s.", html, reason)
            return None
        me = os.geteuid()
        for path in (os.path.dirname(folder), folder, html):
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or info.st_uid != me:
                self.log.warning(
                    "Not releasing %s: %s is a link or not the instructor's own.", html, path
                )
                return None
        # submission_secret.txt came with the submission: a student may leave it out or empty it
        with open(os.path.join(folder, "timestamp.txt")) as fh:
            timestamp = fh.read()
        with open(os.path.join(folder, "submission_secret.txt")) as fh:
            secret = fh.read()
        if not secret.strip():
            self.log.warning("Not releasing %s: its submission_secret.txt is blank.", html)
            return None
        checksum = notebook_hash(secret=secret, notebook_id=notebook_id)
        return student_id, notebook_id, html, secret, checksum, timestamp

    def _release(self, student_id, notebook_id, html, checksum, timestamp) -> None:
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
