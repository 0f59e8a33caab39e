"""Sphinx configuration of the course site; tools/build_site.py copies it next to the pages.

The lessons arrive executed and static (tools/build_site.py), so MyST-NB executes nothing and
loads no widget scripts; MathJax 3 is served from the site's own _static/mathjax/.
"""

import json
from pathlib import Path

settings = json.loads((Path(__file__).parent / "settings.json").read_text(encoding="utf-8"))

project = "attnlab"
author = "the attnlab authors"
copyright = "the attnlab authors"
extensions = ["myst_nb"]
exclude_patterns = ["_build", "_extra", "**.ipynb_checkpoints"]
master_doc = "index"

nb_execution_mode = "off"  # executed by tools/build_site.py, outputs made static there
nb_ipywidgets_js = {}  # no widget manager from a CDN: no page has a live widget
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]
nb_render_markdown_format = "myst"  # the help panels' hints, with their maths
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header", "mystnb.unknown_mime_type"]

mathjax_path = "mathjax/tex-chtml.js"  # relative to _static: no CDN
html_theme = "sphinx_book_theme"
html_title = "attnlab — scaled dot-product attention"
html_static_path = ["_static"]
html_extra_path = ["_extra"]
html_css_files = ["site.css"]
html_copy_source = False
html_show_sourcelink = False
html_last_updated_fmt = None
html_theme_options = {
    "repository_url": f"https://github.com/{settings['repository']}",
    "repository_branch": settings.get("branch", "main"),
    "use_repository_button": True,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "show_prev_next": True,
    "home_page_in_toc": True,
}
