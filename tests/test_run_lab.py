"""The README's first command, ``./run.sh lab``, starts JupyterLab on the course at lesson 0.

The server is started the way the README tells a learner to start it on a remote or headless
machine (``./run.sh lab --no-browser --ip 127.0.0.1 --port P``), with private Jupyter and home
directories, and stopped by its process group. It must print a URL that opens lesson 0 (not the
Launcher), answer on that URL with the token it printed, serve notebooks/, load the course's
server extension, and give JupyterLab the course's settings defaults: widget state saved with
the notebook and no "Jupyter news?" pop-up.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path

import pytest
from processes import free_port

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    not (ROOT / ".venv" / "bin" / "jupyter").exists(), reason="needs the .venv that run.sh makes"
)
OVERRIDES = "lab/settings/overrides.d/attnlab.json"
PAGE_CONFIG = "labconfig/page_config.json"
FAVICON_BUSY = "@jupyterlab/application-extension:faviconbusy"
PRINTED_URL = re.compile(r"http://127\.0\.0\.1:\d+/\S*")


def get(url: str) -> tuple[int, str]:
    # A server's first /lab page builds the page config and lists the extensions: seconds on
    # a busy 2-core machine, so the timeout is far above what a quiet run needs (~0.5 s).
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.status, response.read().decode("utf-8", errors="replace")


def get_while_running(server: subprocess.Popen, log: Path, url: str) -> tuple[int, str]:
    """:func:`get`, asked again while the connection is refused and the server still runs (a
    fresh-clone CI once had it refused right after the URL was printed, on a loaded machine);
    a server that exited fails with the end of its log."""
    for _ in range(30):
        try:
            return get(url)
        except urllib.error.URLError as exc:
            if not isinstance(exc.reason, ConnectionRefusedError):
                raise
            assert server.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
            time.sleep(1)
    raise AssertionError(f"connection refused for 30 s:\n{log.read_text()[-3000:]}")


def wait_for_printed_url(server: subprocess.Popen, log: Path) -> str:
    """The first URL with a token the server prints (as a learner would copy it)."""
    for _ in range(240):
        urls = [u for u in PRINTED_URL.findall(log.read_text()) if "token=" in u]
        if urls:
            return urls[0]
        assert server.poll() is None, log.read_text()[-2000:]
        time.sleep(0.5)
    raise AssertionError(f"no URL printed within 120 s:\n{log.read_text()[-2000:]}")


def test_run_sh_lab_headless_prints_a_url_that_opens_lesson_0(tmp_path):
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path)}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[var] = str(tmp_path / var.lower())
    env.pop("JUPYTER_CONFIG_PATH", None)
    command = [
        "bash",
        str(ROOT / "run.sh"),
        "lab",
        "--no-browser",
        "--ip",
        "127.0.0.1",
        "--port",
        str(port),
        "--ServerApp.port_retries=0",
    ]
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=tmp_path,
        )
    try:
        url = wait_for_printed_url(server, log)
        parts = urllib.parse.urlsplit(url)
        assert parts.port == port, url
        assert parts.path == "/lab/tree/00-start-here.ipynb", url
        token = urllib.parse.parse_qs(parts.query)["token"][0]
        status, page = get(url)
        assert status == 200 and "JupyterLab" in page, page[:500]
        assert get(f"http://127.0.0.1:{port}/api/status?token={token}")[0] == 200

        text = log.read_text()
        assert f"Serving notebooks from local directory: {ROOT / 'notebooks'}" in text
        assert "attnlab: kernel websockets send without Nagle's delay" in text
        assert "Editable installation" not in text
        opens = list((tmp_path / "jupyter_runtime_dir").glob("jpserver-file-to-run-*-open.html"))
        assert opens and "tree/00-start-here.ipynb" in opens[0].read_text(), opens

        def setting(plugin: str) -> dict:
            """What JupyterLab will use: the schema's defaults (with overrides), then the user's."""
            body = get(f"http://127.0.0.1:{port}/lab/api/settings/{plugin}?token={token}")[1]
            reply = json.loads(body)
            defaults = {k: v.get("default") for k, v in reply["schema"]["properties"].items()}
            return {**defaults, **reply["settings"]}

        widgets = setting("@jupyter-widgets/jupyterlab-manager:plugin")
        assert widgets["saveState"] is True, widgets
        notification = setting("@jupyterlab/apputils-extension:notification")
        assert notification["fetchNews"] == "false", notification
        assert notification["checkForUpdates"] is False, notification

        # The course's custom.css (attnlab.lab_style): on, and served from the package.
        assert 'href="/custom/custom.css"' in page, page[:800]  # LabApp.custom_css is on
        assert "attnlab: JupyterLab's custom.css comes from" in text
        status, css = get(f"http://127.0.0.1:{port}/custom/custom.css?token={token}")
        assert status == 200 and "--jp-sidebar-min-width: 280px" in css, css[:300]
        assert "attnlab: lessons are saved without the kernel's language_info" in text
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def test_editable_install_prints_no_setuptools_warning(tmp_path):
    """``pip install -e .`` (requirements.txt) is quiet: a .pth file, no meta path finder."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            "-e",
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    output = result.stdout + result.stderr
    assert "Editable installation" not in output and "Warning" not in output, output
    pth = list((venv / "lib").glob("python3*/site-packages/__editable__.attnlab-*.pth"))
    assert pth and pth[0].read_text().split() == [str(ROOT)], pth


def test_installed_package_brings_the_course_settings(tmp_path):
    """``pip install .`` (Binder, The Littlest JupyterHub, the hub image) installs the same
    JupyterLab settings defaults ./run.sh lab reads in place: widget state saved, no news,
    and the same page config (no busy favicon)."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = tmp_path.glob("attnlab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        settings = [n for n in names if n.endswith(f"share/jupyter/{OVERRIDES}")]
        assert settings, names
        installed = json.loads(archive.read(settings[0]))
        (page_config,) = [n for n in names if n.endswith(f"etc/jupyter/{PAGE_CONFIG}")]
        installed_page_config = json.loads(archive.read(page_config))
    in_place = json.loads((ROOT / "jupyter-config" / OVERRIDES).read_text())
    assert installed == in_place
    assert installed["@jupyter-widgets/jupyterlab-manager:plugin"]["saveState"] is True
    assert installed_page_config == json.loads((ROOT / "jupyter-config" / PAGE_CONFIG).read_text())
    # What a pip install (Binder, the hub images) needs for the course's custom.css and the
    # save hook: the server extensions enabled, and the CSS itself.
    (server_config,) = [n for n in names if n.endswith("jupyter_server_config.d/attnlab.json")]
    with zipfile.ZipFile(wheel) as archive:
        enabled = json.loads(archive.read(server_config))
    assert {"attnlab.lab_style", "attnlab.save_hook"} <= set(
        enabled["ServerApp"]["jpserver_extensions"]
    )
    assert "attnlab/lab_custom/custom.css" in names


def test_course_config_switches_the_busy_favicon_off():
    """JupyterLab itself reads the page config on the course's config path: the plugin that
    swaps the tab icon on every kernel busy/idle (twice per slider step) is disabled."""
    env = {**os.environ, "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config")}
    listed = subprocess.run(
        [sys.executable, "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    output = listed.stdout + listed.stderr
    disabled = output.split("Disabled extensions:", 1)
    assert len(disabled) == 2 and FAVICON_BUSY in disabled[1], output


CHROMIUM = Path(os.environ.get("ATTNLAB_CHROMIUM", "/usr/bin/chromium"))
FORMULA_LESSON = "01-dot-product-scores.ipynb"


def _browser_suite_on() -> bool:
    on = os.environ.get("ATTNLAB_BROWSER") == "1" or os.environ.get("CI", "").lower() in {
        "true",
        "1",
    }
    return on and CHROMIUM.is_file()


def _page_problems(browser, url: str) -> tuple[list, list]:
    """Open ``url``, wait for its first typeset formula; (responses >= 400, MathJax fonts that
    failed to load)."""
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    bad = []
    page.on("response", lambda r: r.status >= 400 and bad.append((r.status, r.url)))
    try:
        page.goto(url)
        page.wait_for_selector("mjx-container", timeout=120_000)
        page.wait_for_timeout(3000)  # the fonts a formula asks for load after it is typeset
        fonts = page.evaluate(
            "() => [...document.fonts].filter(f => /MJX/.test(f.family))"
            ".map(f => [f.family, f.status])"
        )
    finally:
        page.close()
    return bad, [f for f in fonts if f[1] == "error"]


@pytest.mark.browser
@pytest.mark.skipif(not _browser_suite_on(), reason="needs ATTNLAB_BROWSER=1 (or CI) and Chromium")
def test_run_sh_lab_serves_notebook_7_and_formula_fonts(tmp_path):
    """The server ``./run.sh lab`` starts serves Notebook 7 too (``/tree``, ``/notebooks/``),
    and a lesson's formulas get their MathJax fonts in both front ends, in either order (the
    two ship the same font names; a 403 on them left every formula in fallback fonts)."""
    from playwright.sync_api import sync_playwright

    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path)}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[var] = str(tmp_path / var.lower())
    env.pop("JUPYTER_CONFIG_PATH", None)
    command = ["bash", str(ROOT / "run.sh"), "lab", "--no-browser", "--ip", "127.0.0.1"]
    command += ["--port", str(port), "--ServerApp.port_retries=0"]
    log = tmp_path / "lab.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=tmp_path,
        )
    try:
        url = wait_for_printed_url(server, log)
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["token"][0]
        base = f"http://127.0.0.1:{port}"
        status, page = get_while_running(server, log, f"{base}/tree?token={token}")
        assert status == 200 and "Jupyter Notebook" in page, page[:500]
        pages = [
            f"{base}/lab/tree/{FORMULA_LESSON}?token={token}",
            f"{base}/notebooks/{FORMULA_LESSON}?token={token}",
            f"{base}/lab/tree/{FORMULA_LESSON}?token={token}&reset",
        ]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM),
                headless=True,
                args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
            )
            try:
                problems = {u.split("?")[0]: _page_problems(browser, u) for u in pages}
            finally:
                browser.close()
        forbidden = {u: [b for b in bad if b[0] == 403] for u, (bad, _) in problems.items()}
        assert not any(forbidden.values()), forbidden
        failed_fonts = {u: fonts for u, (_, fonts) in problems.items() if fonts}
        assert not failed_fonts, failed_fonts
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
