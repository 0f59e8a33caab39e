"""Build the course as a static website: every lesson executed now, shown without a kernel.

    python tools/build_site.py                 # build/site/index.html (self-study: solutions in)
    python tools/build_site.py --no-solutions  # an instructor's site: hints, no solutions
    python tools/build_site.py --readme-picture  # write site/explorer.png (the README's picture)

``./run.sh site`` installs what it needs (requirements-site.txt, MathJax 3 from npm into
build/site-assets/) and runs this without network where it can (``unshare --net`` as root).

Steps:

1. Each learner notebook (``notebooks/``, from the course map :data:`attnlab.course.COURSE`) is
   executed with nbclient in a fresh kernel (two at a time), from ``notebooks/`` as a learner
   runs it; the learner's progress file is a temporary one.
2. Every output is made static (:func:`static_outputs`): an explorer becomes its picture at its
   starting values with its alt text (:meth:`attnlab.explorers.base.Explorer.picture_alt`); a
   static figure its picture with its alt text; a help panel its hints as collapsed
   ``<details>`` (solutions only when the build keeps them); lesson 0's self-test its
   "this is a static page" note. Widget views and the saved widget state go; a widget that
   has no static form, or a widget repr (``VBox(children=...)``), stops the build.
3. Launch links go under each lesson's title (:func:`launch_cell`): Binder, the class's
   JupyterHub (deploy/nbgitpuller_link.py's link, when ``site/settings.toml`` names a hub) and
   the README's commands. The landing page (:func:`landing_page`) has the course map and an
   explorer's picture.
4. Sphinx + MyST-NB (``nb_execution_mode = "off"``: already executed) write the pages, with
   MathJax, the theme and its fonts served from the site itself.
"""

from __future__ import annotations

import argparse
import base64
import html
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "site"
SETTINGS = SITE / "settings.toml"
OUT = ROOT / "build" / "site"
SOURCE_DIR = ROOT / "build" / "site-src"
MATHJAX = ROOT / "build" / "site-assets" / "node_modules" / "mathjax" / "es5"
README_PICTURE = SITE / "explorer.png"
#: The explorer the landing page and the README show (at its starting values).
SHOWCASE = "attnlab.explorers.temperature.TemperatureExplorer"

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
PNG = "image/png"
HTML = "text/html"
MARKDOWN = "text/markdown"
PLAIN = "text/plain"
#: A widget's repr, as IPython prints one that has no other form: ``VBox(children=(...``.
WIDGET_REPR = re.compile(r"^\s*[A-Z]\w*\((children|value|layout|description|options)=", re.M)
#: A course figure's HTML (attnlab.plots.display.figure_html): its alt text and PNG.
FIGURE_IMG = re.compile(
    r'<img class="attnlab-static-figure" alt="([^"]*)" '
    r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"'
)


class SiteError(RuntimeError):
    """The site cannot be built as asked (a setting, or an output with no static form)."""


# ----------------------------------------------------------------------------- settings
def load_settings(path: Path = SETTINGS) -> dict:
    """The site's settings (``site/settings.toml``), checked.

    ``repository`` (GitHub owner/name: Binder and source links), ``branch``, ``hub_url``
    (empty: no JupyterHub link), ``hub_repository`` (what nbgitpuller clones; empty: the
    course repository), ``graded`` (a graded class: its hub link must clone a repository
    without ``source/``) and ``solutions``.
    """
    settings = tomllib.loads(path.read_text(encoding="utf-8"))
    check_settings(settings)
    return settings


def check_settings(settings: dict) -> None:
    """Raise :class:`SiteError` if the settings would publish what they must not.

    Examples
    --------
    >>> check_settings({"repository": "attnlab/attnlab", "hub_url": "https://hub.example.org",
    ...                 "hub_repository": "", "graded": True, "solutions": False})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    build_site.SiteError: graded = true: hub_repository must name the class's learner repository ...
    """
    repo = settings.get("repository", "")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
        raise SiteError(f"repository must be GitHub's owner/name; got {repo!r}")
    if settings.get("graded"):
        hub_repo = settings.get("hub_repository", "").rstrip("/").removesuffix(".git")
        if settings.get("hub_url") and (
            not hub_repo or hub_repo.lower().endswith(f"github.com/{repo}".lower())
        ):
            raise SiteError(
                "graded = true: hub_repository must name the class's learner repository (the "
                f"release notebooks, without source/), not the course repository {repo!r}, "
                "which holds source/ with every solution"
            )
        if settings.get("solutions"):
            raise SiteError("graded = true: solutions must be false (a graded class's site)")


def _nbgitpuller_link():
    path = ROOT / "deploy" / "nbgitpuller_link.py"
    spec = importlib.util.spec_from_file_location("attnlab_nbgitpuller_link", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.nbgitpuller_link


def launch_links(settings: dict, notebook: str) -> dict:
    """The links that open ``notebook`` (e.g. ``"03-softmax"``) live, by name.

    Examples
    --------
    >>> links = launch_links({"repository": "attnlab/attnlab", "branch": "main",
    ...                       "hub_url": "", "hub_repository": ""}, "03-softmax")
    >>> links["binder"]
    'https://mybinder.org/v2/gh/attnlab/attnlab/main?urlpath=lab/tree/notebooks/03-softmax.ipynb'
    >>> "hub" in links
    False
    """
    repo, branch = settings["repository"], settings.get("branch", "main")
    path = f"notebooks/{notebook}.ipynb"
    links = {
        "binder": f"https://mybinder.org/v2/gh/{repo}/{branch}?urlpath=lab/tree/{path}",
        "repository": f"https://github.com/{repo}",
    }
    if settings.get("hub_url"):
        clone = settings.get("hub_repository") or f"https://github.com/{repo}"
        links["hub"] = _nbgitpuller_link()(settings["hub_url"], clone, branch, open_path=path)
    return links


def launch_cell(settings: dict, notebook: str) -> dict:
    """A Markdown cell with the launch links of ``notebook``, for under its title."""
    links = launch_links(settings, notebook)
    parts = [f"[on Binder]({links['binder']})"]
    if "hub" in links:
        parts.append(f"[on your class's JupyterHub]({links['hub']})")
    source = (
        '<div class="attnlab-launch">\n\n'
        f"**Run this lesson live** (this page is static: its sliders and checks need a "
        f"kernel): {' · '.join(parts)} · or on your computer, from a clone of "
        f"[the course]({links['repository']}): `./run.sh lab` to open it in JupyterLab, "
        f"`./run.sh test --all` to run every test "
        f"([README]({links['repository']}#quick-start)).\n\n</div>"
    )
    return {"cell_type": "markdown", "id": "attnlab-launch", "metadata": {}, "source": source}


# ----------------------------------------------------------------------------- executing
def execute(notebook: str, solutions: bool) -> dict:
    """``notebooks/<notebook>.ipynb`` executed in a fresh kernel from ``notebooks/``."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "notebooks" / f"{notebook}.ipynb", as_version=4)
    with tempfile.TemporaryDirectory() as scratch:
        env = {  # a kernel inherits this process's environment
            "ATTNLAB_PROGRESS": str(Path(scratch) / "progress.json"),
            "ATTNLAB_HIDE_SOLUTIONS": "0" if solutions else "1",
        }
        os.environ.update(env)
        client = NotebookClient(
            nb,
            timeout=600,
            kernel_name="python3",
            resources={"metadata": {"path": str(ROOT / "notebooks")}},
        )
        client.execute()
    return json.loads(nbformat.writes(nb))


# ----------------------------------------------------------------------------- static outputs
def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def picture_html(path: str, alt: str, kind: str) -> str:
    """An ``<img>`` of the picture at ``path`` with its ``alt`` text.

    >>> picture_html("pictures/a.png", 'a "b" <c>', "explorer")[41:]
    '<img src="pictures/a.png" alt="a &quot;b&quot; &lt;c&gt;"></figure>'
    """
    alt = html.escape(alt, quote=True)
    return f'<figure class="attnlab-{kind}-picture"><img src="{path}" alt="{alt}"></figure>'


def static_outputs(nb: dict, name: str, pictures: Path) -> dict:
    """Make every output of ``nb`` static, in place (see the module docstring); returns counts.

    Pictures are written to ``pictures`` (``<name>-<n>.png``) and shown from ``pictures/``.
    Raises :class:`SiteError` for a widget with no static form or a widget repr.
    """
    counts = {"explorers": 0, "figures": 0, "help": 0, "widgets_dropped": 0}
    pictures.mkdir(parents=True, exist_ok=True)

    def save(png_b64: str) -> str:
        number = counts["explorers"] + counts["figures"]
        file = f"{name}-{number}.png"
        (pictures / file).write_bytes(base64.b64decode(png_b64))
        return f"pictures/{file}"

    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            data = output.get("data")
            if output.get("output_type") == "stream" and WIDGET_REPR.search(_text(output["text"])):
                raise SiteError(f"{name} cell {index}: a widget repr was printed")
            if not isinstance(data, dict):
                continue
            figure = FIGURE_IMG.search(_text(data.get(HTML, "")))
            if WIDGET_VIEW in data and PNG in data:  # an explorer: its picture, with alt text
                alt = output.get("metadata", {}).get(PNG, {}).get("alt")
                if not alt:
                    raise SiteError(f"{name} cell {index}: an explorer's picture has no alt text")
                output["data"] = {HTML: picture_html(save(data[PNG]), alt, "explorer")}
                counts["explorers"] += 1
                output["metadata"] = {}
            elif figure:  # a static figure: its picture, with its alt text
                alt = html.unescape(figure.group(1))
                output["data"] = {HTML: picture_html(save(figure.group(2)), alt, "figure")}
                counts["figures"] += 1
            elif WIDGET_VIEW in data:
                data.pop(WIDGET_VIEW)
                counts["widgets_dropped"] += 1
                if MARKDOWN in data:
                    counts["help"] += 1
                    data.pop(PLAIN, None)
                elif HTML in data:
                    data.pop(PLAIN, None)
                else:
                    raise SiteError(
                        f"{name} cell {index}: a widget with no static form "
                        f"({_text(data.get(PLAIN, ''))[:80]!r})"
                    )
            plain = _text(data.get(PLAIN, "")) if isinstance(output.get("data"), dict) else ""
            if plain and len(output["data"]) == 1 and WIDGET_REPR.search(plain):
                raise SiteError(f"{name} cell {index}: a widget repr {plain[:60]!r}")
    nb["metadata"].pop("widgets", None)  # no saved widget state: nothing on the page runs it
    return counts


# ----------------------------------------------------------------------------- pages
def explorer_picture(path: Path) -> str:
    """Save the showcase explorer's figure at its starting values to ``path``; its alt text."""
    import importlib

    module, _, name = SHOWCASE.rpartition(".")
    explorer = getattr(importlib.import_module(module), name)()
    explorer.figure.savefig(path, dpi=100)
    return explorer.picture_alt()


FORMULA = (
    r"$$\mathrm{Attention}(Q, K, V) = "
    r"\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V$$"
)


def landing_page(settings: dict, picture: str, alt: str) -> str:
    """The site's first page: what the course is, an explorer, the course map, how to run it."""
    from attnlab.course import COURSE, CourseMap

    links = launch_links(settings, COURSE[0].notebook)
    rows = ["| # | lesson | what you learn | time |", "| --- | --- | --- | --- |"]
    for entry in COURSE:
        rows.append(
            f"| {entry.number} | [{entry.title}]({entry.notebook}.ipynb) | {entry.learn} "
            f"| {entry.minutes} min |"
        )
    hub = f" · [on your class's JupyterHub]({links['hub']})" if "hub" in links else ""
    solutions = (
        "Each exercise's hints are under its check, folded; so is a worked solution."
        if settings.get("solutions")
        else "Each exercise's hints are under its check, folded (this site has no solutions)."
    )
    return f"""# attnlab — learn scaled dot-product attention by moving it

An interactive Jupyter course that builds

{FORMULA}

one piece at a time. These pages show every lesson as it looks when run from the top: each
explorer as the picture a learner sees at its starting values. Live, you drag its sliders and
the picture and the numbers move. {solutions}

```{{raw}} html
{picture_html(picture, alt, "explorer")}
```

**Run the course live:** [on Binder]({links["binder"]}){hub} · or on your computer, from a
clone of [the course]({links["repository"]}): `./run.sh lab` opens lesson 0 in JupyterLab and
`./run.sh test --all` runs every test ([README]({links["repository"]}#quick-start)).

## The lessons

{chr(10).join(rows)}

{CourseMap(COURSE).summary()}

```{{toctree}}
:hidden:
:maxdepth: 1

{chr(10).join(entry.notebook for entry in COURSE)}
```
"""


def copy_mathjax(static: Path) -> None:
    """MathJax 3's CommonHTML build, served from the site (no CDN)."""
    if not (MATHJAX / "tex-chtml.js").exists():
        raise SiteError(
            f"MathJax 3 is missing at {MATHJAX}: ./run.sh site installs it "
            "(npm install mathjax@3 --prefix build/site-assets)"
        )
    target = static / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(MATHJAX / "tex-chtml.js", target / "tex-chtml.js")
    for part in ("output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y"):
        shutil.copytree(MATHJAX / part, target / part, dirs_exist_ok=True)


def _execute_one(args) -> tuple[str, dict, float]:
    notebook, solutions = args
    start = time.monotonic()
    return notebook, execute(notebook, solutions), time.monotonic() - start


def build(out: Path = OUT, solutions: bool | None = None, jobs: int = 2) -> dict:
    """Build the site into ``out``; returns what was built (pages, pictures, seconds)."""
    from attnlab.course import COURSE

    started = time.monotonic()
    settings = load_settings()
    if solutions is not None:
        settings["solutions"] = solutions
        check_settings(settings)
    src = SOURCE_DIR
    shutil.rmtree(src, ignore_errors=True)
    (src / "_static").mkdir(parents=True)
    copy_mathjax(src / "_static")
    shutil.copy2(SITE / "conf.py", src / "conf.py")
    shutil.copy2(SITE / "site.css", src / "_static" / "site.css")
    (src / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    pictures = src / "_extra" / "pictures"
    pictures.mkdir(parents=True)

    notebooks = [entry.notebook for entry in COURSE if entry.ready]
    report = {"lessons": {}, "execute_seconds": {}}
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = pool.map(_execute_one, [(n, bool(settings["solutions"])) for n in notebooks])
        for notebook, nb, seconds in results:
            counts = static_outputs(nb, notebook, pictures)
            nb["cells"].insert(1, launch_cell(settings, notebook))
            (src / f"{notebook}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
            report["lessons"][notebook] = counts
            report["execute_seconds"][notebook] = round(seconds, 1)
            print(f"executed {notebook} in {seconds:.1f} s: {counts}", flush=True)
    executed = time.monotonic()
    alt = explorer_picture(pictures / "explorer.png")
    (src / "index.md").write_text(
        landing_page(settings, "pictures/explorer.png", alt), encoding="utf-8"
    )
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-b",
            "html",
            "-q",
            "-W",
            "--keep-going",
            "-j",
            "1",
            str(src),
            str(out),
        ],
        check=True,
    )
    shutil.rmtree(out / ".doctrees", ignore_errors=True)
    for source_map in out.rglob("*.map"):  # the theme's source maps: 3.5 MB no page loads
        source_map.unlink()
    report["execute_total_seconds"] = round(executed - started, 1)
    report["total_seconds"] = round(time.monotonic() - started, 1)
    report["pages"] = sorted(p.name for p in out.glob("*.html"))
    report["solutions"] = bool(settings["solutions"])
    (out / "build-report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the site goes")
    parser.add_argument(
        "--no-solutions",
        action="store_true",
        help="leave worked solutions out (an instructor's site)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="lessons executed at once")
    parser.add_argument(
        "--readme-picture",
        action="store_true",
        help=f"only write {README_PICTURE.relative_to(ROOT)}",
    )
    args = parser.parse_args(argv)
    if args.readme_picture:
        print(explorer_picture(README_PICTURE))
        return
    try:
        report = build(args.out, False if args.no_solutions else None, args.jobs)
    except SiteError as exc:
        sys.exit(f"build_site: {exc}")
    sizes = {p.name: p.stat().st_size for p in sorted(args.out.glob("*.html"))}
    print(
        f"site: {len(sizes)} pages in {args.out} in {report['total_seconds']} s "
        f"(executing {report['execute_total_seconds']} s); open {args.out / 'index.html'}"
    )
    for name, size in sizes.items():
        print(f"  {name:40s} {size / 1024:7.0f} KiB")


if __name__ == "__main__":
    main()
