"""Where AppArmor keeps bwrap from making its namespaces (Ubuntu 23.10 and later), the reason
the grading sandbox is unavailable says so and gives the commands that fix it."""

from __future__ import annotations

import re
import subprocess

import pytest

from attnlab.grading import sandbox

PROFILE = (
    "abi <abi/4.0>,\ninclude <tunables/global>\n"
    "profile bwrap {bwrap} flags=(unconfined) {{\n  userns,\n}}\n"
)
#: What bwrap prints on Ubuntu 24.04 without the profile.
REFUSED = "bwrap: setting up uid map: Permission denied"
RUN = subprocess.run  # the real one: the fixture fakes it for the sandbox's probe


@pytest.fixture
def bwrap_refused(monkeypatch):
    """bwrap installed, and every sandboxed start refused as AppArmor refuses it."""

    def run(command, **kwargs):
        assert command[0].endswith("bwrap")
        return subprocess.CompletedProcess(command, 1, stdout="", stderr=REFUSED + "\n")

    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(sandbox.subprocess, "run", run)


def test_the_apparmor_restriction_is_named_with_its_fix(bwrap_refused, tmp_path):
    sysctl = tmp_path / "apparmor_restrict_unprivileged_userns"
    sysctl.write_text("1\n")
    why = sandbox.unavailable.__wrapped__(str(sysctl))
    assert why.startswith("bwrap could not start a sandboxed Python: " + REFUSED)
    assert "kernel.apparmor_restrict_unprivileged_userns = 1" in why
    # The command it gives writes the standard profile and loads it.
    command = re.search(r"as root: (printf .*)$", why).group(1)
    printf, _, load = command.partition(" > /etc/apparmor.d/bwrap && ")
    assert load == "apparmor_parser -r /etc/apparmor.d/bwrap"
    written = RUN(["sh", "-c", printf], capture_output=True, text=True, check=True)
    assert written.stdout == PROFILE.format(bwrap="/usr/bin/bwrap")


@pytest.mark.parametrize("reading", ["0\n", None])
def test_elsewhere_the_reason_is_bwraps_own(bwrap_refused, tmp_path, reading):
    sysctl = tmp_path / "apparmor_restrict_unprivileged_userns"  # absent: no AppArmor knob
    if reading is not None:
        sysctl.write_text(reading)
    why = sandbox.unavailable.__wrapped__(str(sysctl))
    assert why == "bwrap could not start a sandboxed Python: " + REFUSED
