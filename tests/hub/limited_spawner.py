"""A local-process spawner that enforces ``Spawner.mem_limit`` with a memory cgroup.

JupyterHub's local spawners only pass ``mem_limit`` on as ``MEM_LIMIT``; on a real hub the
limit is enforced by the kernel's memory cgroup around the user's server: Kubernetes puts each
pod in one (Zero to JupyterHub), systemd puts each user's unit in one (systemdspawner, which
The Littlest JupyterHub uses). When the processes in it need more than the limit, the kernel's
OOM killer kills the largest of them: a lesson's kernel, not the server. This spawner does the
same for the test hub: each single-user server starts inside a cgroup of its own
(``cgroup_parent``/<user>, made by tests/hub/hubrun.py), with the limit set before it starts
(cgroup v2 ``memory.max`` with no swap, or cgroup v1 ``memory.limit_in_bytes`` and, where swap
accounting exists, ``memory.memsw.limit_in_bytes``). The server's kernels start inside it too.
"""

from __future__ import annotations

import os
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner
from traitlets import Unicode


def set_limit(cgroup: Path, limit: int) -> None:
    """Set a memory cgroup's limit (no swap beyond it), cgroup v2 or v1."""
    if (cgroup / "memory.max").exists():  # v2
        (cgroup / "memory.max").write_text(str(limit))
        if (cgroup / "memory.swap.max").exists():
            (cgroup / "memory.swap.max").write_text("0")
        return
    (cgroup / "memory.limit_in_bytes").write_text(str(limit))  # v1
    if (cgroup / "memory.memsw.limit_in_bytes").exists():
        (cgroup / "memory.memsw.limit_in_bytes").write_text(str(limit))


def oom_kills(cgroup: Path) -> int:
    """How many processes the OOM killer has killed in ``cgroup`` (v2 memory.events, v1
    memory.oom_control)."""
    for name in ("memory.events", "memory.oom_control"):
        path = cgroup / name
        if path.exists():
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


class MemoryLimitedSpawner(SimpleLocalProcessSpawner):
    """SimpleLocalProcessSpawner with each server in a memory cgroup limited to mem_limit."""

    cgroup_parent = Unicode(
        "", config=True, help="a memory cgroup folder; each server gets a child of it"
    )

    @property
    def cgroup(self) -> Path:
        return Path(self.cgroup_parent) / (self.user.name + (f"-{self.name}" if self.name else ""))

    async def start(self):
        if self.cgroup_parent and self.mem_limit:
            self.cgroup.mkdir(exist_ok=True)
            set_limit(self.cgroup, int(self.mem_limit))
        return await super().start()

    def make_preexec_fn(self, name):
        inner = super().make_preexec_fn(name)
        if not (self.cgroup_parent and self.mem_limit):
            return inner
        procs = str(self.cgroup / "cgroup.procs")

        def preexec():  # in the child, before exec: it and all it starts are in the cgroup
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
            inner()

        return preexec
