"""Plot helpers, one module per kind of picture.

Every helper takes ``ax=None`` (a new figure is made when it is missing), returns
the artists it drew, leaves global matplotlib state alone and never calls
``plt.show()``.
"""

from attnlab.plots.display import install as _install_figure_display

_install_figure_display()  # static figures get alt text (attnlab/plots/display.py)
