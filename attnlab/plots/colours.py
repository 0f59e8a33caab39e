"""The course's one palette: every plot and explorer takes its colours from here.

The data colours are the Okabe–Ito palette, which stays distinguishable with the common
kinds of colour blindness; weights use the sequential ``viridis`` map, readable the same way.
The live figure (:mod:`attnlab.live`) keeps these colours in dark mode and turns only
black and white around, so a colour means the same on every page.
"""

from __future__ import annotations

__all__ = ["OKABE_ITO", "PALETTE", "QUERY_COLOUR", "WEIGHT_CMAP"]

#: Okabe–Ito colours by name, plus a neutral grey.
PALETTE = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "sky": "#56B4E9",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "yellow": "#F0E442",
    "grey": "#777777",
}
#: The same colours in the order the course gives them to keys A, B, C, ...
OKABE_ITO = tuple(
    PALETTE[name] for name in ("blue", "green", "vermillion", "purple", "orange", "sky", "yellow")
)
#: The colour of a query arrow.
QUERY_COLOUR = "#000000"
#: The colour map of attention weights (0 … 1).
WEIGHT_CMAP = "viridis"
