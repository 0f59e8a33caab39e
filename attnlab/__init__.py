"""attnlab: the helper package behind the attention course.

The numerics (this namespace) need numpy only::

    >>> import attnlab
    >>> attnlab.softmax([2, 1, 1]).round(3).tolist()
    [0.576, 0.212, 0.212]

Plots, explorers and exercises live in submodules that also need matplotlib and
ipywidgets: :mod:`attnlab.plots`, :mod:`attnlab.explorers`, :mod:`attnlab.exercises`.
:mod:`attnlab.course` maps every lesson to its notebooks and to the code behind it.
"""

from attnlab.attention import (
    attention_scores,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)
from attnlab.backward import attention_backward, softmax_vjp
from attnlab.online import online_normaliser, online_softmax, online_softmax_update
from attnlab.softmax_family import (
    entropy,
    log_softmax,
    logsumexp,
    naive_softmax,
    softmax,
    softmax_jacobian,
)
from attnlab.tiling import tiled_attention

__version__ = "0.1.0"

__all__ = [
    "attention_backward",
    "attention_scores",
    "causal_mask",
    "entropy",
    "log_softmax",
    "logsumexp",
    "naive_softmax",
    "online_normaliser",
    "online_softmax",
    "online_softmax_update",
    "padding_mask",
    "scaled_dot_product_attention",
    "softmax",
    "softmax_jacobian",
    "softmax_vjp",
    "tiled_attention",
]
