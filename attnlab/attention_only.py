r"""An attention-only transformer in numpy: forward, backward, and a head switched off.

The model of Elhage et al. (2021): no MLPs, no layer norm, only causal attention heads that
read the residual stream and write back into it::

    x⁰ = E[tokens] + P[:n]                                  (batch, n, d_model)
    for each layer l:                                         heads h = 0 … H − 1
        q, k, v = x W_Q[l, h], x W_K[l, h], x W_V[l, h]      (batch, n, d_head) each
        A[l, h] = softmax(q kᵀ / √d_head, causal)            (batch, n, n)
        x ← x + Σ_h (A[l, h] v) W_O[l, h]                     (batch, n, d_model)
    logits = x U                                              (batch, n, vocab)

The parameters are a plain ``dict`` of arrays (:func:`init_params`):

=============  ==================================  =================================
name           shape                               what
=============  ==================================  =================================
``embed``      ``(vocab, d_model)``                token embedding ``E``
``pos``        ``(n_ctx, d_model)``                learned position embedding ``P`` (lesson 10)
``w_q.l``      ``(n_heads, d_model, d_head)``      layer ``l``'s queries, one matrix per head
``w_k.l``      ``(n_heads, d_model, d_head)``      keys
``w_v.l``      ``(n_heads, d_model, d_head)``      values
``w_o.l``      ``(n_heads, d_head, d_model)``      each head's write into the residual stream
``unembed``    ``(d_model, vocab)``                unembedding ``U``
=============  ==================================  =================================

The backward pass goes through each head with lesson 9's
:func:`attnlab._kernels.attention_backward_unchecked` (a masked key's weight is 0, and so is
its gradient); :func:`loss_and_grads` is checked against central finite differences in
``tests/test_induction.py``. A head is *ablated* (``ablate=[(layer, head)]``) by zeroing what
it writes into the residual stream. A *path* is ablated (``ablate_paths=[(source, target,
part)]``) by removing what one head wrote from the stream only where a later head reads its
queries, its keys or its values: Elhage et al.'s Q-, K- and V-composition, one at a time.

This module needs numpy only.

Examples
--------
>>> config = ModelConfig(vocab=8, n_ctx=6, d_model=8, n_layers=2, n_heads=2, d_head=4)
>>> params = init_params(config, seed=0)
>>> tokens = np.array([[1, 2, 3, 1, 2, 3]])                        # (batch, n)
>>> logits, cache = forward(params, tokens)
>>> logits.shape, cache.weights[1].shape                           # layer 1: (batch, H, n, n)
((1, 6, 8), (1, 2, 6, 6))
>>> bool(np.allclose(np.triu(cache.weights[0][0, 0], 1), 0))      # causal: no look ahead
True

References
----------
Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
Circuits Thread*, https://transformer-circuits.pub/2021/framework/index.html

Olsson, C. et al. (2022). In-context learning and induction heads. *Transformer Circuits
Thread*, arXiv:2209.11895.
"""

import math
from dataclasses import dataclass

import numpy as np

from attnlab import _kernels, _validate

__all__ = [
    "Cache",
    "ModelConfig",
    "check_params",
    "config_of",
    "forward",
    "init_params",
    "loss_and_grads",
    "next_token_losses",
    "position_losses",
]


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of an attention-only transformer.

    Examples
    --------
    >>> ModelConfig().n_layers, ModelConfig(n_layers=1).n_layers
    (2, 1)

    ``n_layers=0`` is the zero-layer model: embeddings straight into the unembedding, a
    bigram (and position) model with no attention at all.
    """

    vocab: int = 32  #: tokens 0 … vocab − 1
    n_ctx: int = 32  #: the longest sequence (rows of the position embedding)
    d_model: int = 32  #: width of the residual stream
    n_layers: int = 2  #: >= 0
    n_heads: int = 1  #: heads per layer
    d_head: int = 16  #: width of each head's queries, keys and values

    def __post_init__(self):
        for name in ("vocab", "n_ctx", "d_model", "n_heads", "d_head"):
            _validate.positive_int(getattr(self, name), name)
        n = self.n_layers
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 0:
            raise ValueError(f"n_layers must be an int >= 0, got {n!r}")


def init_params(config: ModelConfig, seed: int = 0, dtype=np.float64) -> dict[str, np.ndarray]:
    """Random parameters, seeded: the same ``(config, seed)`` gives the same arrays.

    Embeddings are drawn with standard deviation ``1/√d_model`` (token) and ``0.1/√d_model``
    (position) so a residual row starts with norm about 1; ``W_Q``, ``W_K``, ``W_V`` and ``U``
    with ``1/√fan_in``, so queries, keys and logits start at unit scale; ``W_O`` with
    ``1/√(n_heads · d_head)``.

    Parameters
    ----------
    config : ModelConfig
    seed : int, default 0
    dtype : {float64, float32}, default float64
        Drawn in float64, then cast: a float32 model starts from the float64 one, rounded.
        Every computation keeps the parameters' dtype (float32 trains about twice as fast;
        the gradient checks use float64).

    Returns
    -------
    dict of str to ndarray
        The names and shapes of the module's table, layers ``0 … n_layers − 1``.

    Examples
    --------
    >>> p = init_params(ModelConfig(n_layers=1))
    >>> {name: a.shape for name, a in p.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'embed': (32, 32), 'pos': (32, 32), 'w_q.0': (1, 32, 16), 'w_k.0': (1, 32, 16),
     'w_v.0': (1, 32, 16), 'w_o.0': (1, 16, 32), 'unembed': (32, 32)}
    """
    if not isinstance(config, ModelConfig):
        raise ValueError(f"config must be a ModelConfig, got {type(config).__name__}")
    rng = np.random.default_rng([seed, 11])
    c = config
    d, h, e = c.d_model, c.n_heads, c.d_head
    params = {
        "embed": rng.normal(0.0, 1 / math.sqrt(d), size=(c.vocab, d)),  # (vocab, d_model)
        "pos": rng.normal(0.0, 0.1 / math.sqrt(d), size=(c.n_ctx, d)),  # (n_ctx, d_model)
    }
    for layer in range(c.n_layers):
        for name in ("w_q", "w_k", "w_v"):
            params[f"{name}.{layer}"] = rng.normal(0.0, 1 / math.sqrt(d), size=(h, d, e))
        params[f"w_o.{layer}"] = rng.normal(0.0, 1 / math.sqrt(h * e), size=(h, e, d))
    params["unembed"] = rng.normal(0.0, 1 / math.sqrt(d), size=(d, c.vocab))  # (d_model, vocab)
    if np.dtype(dtype) not in (np.float64, np.float32):
        raise ValueError(f"dtype must be float64 or float32, got {np.dtype(dtype)}")
    return {name: a.astype(dtype, copy=False) for name, a in params.items()}


def config_of(params) -> ModelConfig:
    """The :class:`ModelConfig` that ``params`` were made for, read from their shapes.

    A zero-layer model's parameters say nothing of heads: its ``n_heads`` and ``d_head`` are
    :class:`ModelConfig`'s defaults.

    Raises
    ------
    ValueError
        If a parameter is missing, extra, not a finite float array, or its shape disagrees
        with the others (the message names it and gives its shape and the expected one).

    Examples
    --------
    >>> config_of(init_params(ModelConfig(n_heads=3, n_layers=1)))  # doctest: +NORMALIZE_WHITESPACE
    ModelConfig(vocab=32, n_ctx=32, d_model=32, n_layers=1, n_heads=3, d_head=16)
    """
    required = ("embed", "pos", "unembed")
    if not isinstance(params, dict) or any(name not in params for name in required):
        raise ValueError(
            f"params must be a dict from init_params (with {', '.join(required)}, …); got "
            + (f"keys {sorted(params)}" if isinstance(params, dict) else type(params).__name__)
        )
    names = ("embed", "pos", "w_q.0") if "w_q.0" in params else ("embed", "pos")
    shapes = {name: np.shape(params[name]) for name in names}
    if [len(s) for s in shapes.values()] != [2, 2, 3][: len(names)] or 0 in sum(
        shapes.values(), ()
    ):
        raise ValueError(
            "params['embed'] must be (vocab, d_model), params['pos'] (n_ctx, d_model) and "
            f"params['w_q.0'] (n_heads, d_model, d_head), none empty: got shapes {shapes}"
        )
    config = _config_unchecked(params)
    check_params(params, config)
    return config


def check_params(params, config: ModelConfig) -> None:
    """Raise a ValueError unless ``params`` has exactly the names and shapes ``config`` needs.

    Every array must be finite and floating point (float64 for the gradient check).

    Examples
    --------
    >>> p = init_params(ModelConfig(n_layers=1))
    >>> check_params(p, ModelConfig(n_layers=1)) is None
    True
    >>> check_params({**p, "pos": p["pos"][:4]}, ModelConfig(n_layers=1))
    Traceback (most recent call last):
    ...
    ValueError: params['pos'] must have shape (32, 32) (n_ctx, d_model), got (4, 32)
    """
    expected = _shapes(config)
    if set(params) != set(expected):
        raise ValueError(
            f"params must have exactly the names {list(expected)}; missing "
            f"{sorted(set(expected) - set(params))}, extra {sorted(set(params) - set(expected))}"
        )
    axes = {
        "embed": "(vocab, d_model)",
        "pos": "(n_ctx, d_model)",
        "unembed": "(d_model, vocab)",
        "w_o": "(n_heads, d_head, d_model)",
    }
    for name, shape in expected.items():
        arr = _validate.as_float_array(params[name], f"params[{name!r}]", allow_inf=False)
        if arr.shape != shape:
            what = axes.get(name.split(".")[0], "(n_heads, d_model, d_head)")
            raise ValueError(f"params[{name!r}] must have shape {shape} {what}, got {arr.shape}")


@dataclass(frozen=True)
class Cache:
    """What :func:`forward` computed on the way, for the backward pass and for reading heads.

    ``weights[l]`` is layer ``l``'s attention pattern ``(batch, n_heads, n, n)`` (rows are
    queries, lesson 4); ``residual[l]`` the stream entering layer ``l`` (``residual[-1]`` is
    the one the unembedding reads), ``(batch, n, d_model)``.
    """

    tokens: np.ndarray  #: (batch, n)
    residual: tuple  #: n_layers + 1 arrays (batch, n, d_model)
    q: tuple  #: per layer (batch, n_heads, n, d_head)
    k: tuple  #: per layer (batch, n_heads, n, d_head)
    v: tuple  #: per layer (batch, n_heads, n, d_head)
    weights: tuple  #: per layer (batch, n_heads, n, n)
    mixed: tuple  #: per layer (batch, n_heads, n, d_head): weights @ v, ablated heads zeroed
    keep: tuple  #: per layer (n_heads,) 1.0, or 0.0 for an ablated head


def forward(params, tokens, ablate=None, check: bool = True, *, ablate_paths=None):
    """Logits for every position, and the :class:`Cache` of everything computed on the way.

    Parameters
    ----------
    params : dict of str to ndarray
        From :func:`init_params` (or trained); never modified.
    tokens : array_like of int, shape (batch, n)
        ``n <= n_ctx``, entries in ``0 … vocab − 1``.
    ablate : iterable of (int, int), optional
        ``(layer, head)`` pairs whose output is zeroed before it reaches the residual stream.
    check : bool, default True
        Validate ``params`` (the trainer, which made them, passes False).
    ablate_paths : iterable of (source, target, part), optional
        Path ablations. ``source`` and ``target`` are ``(layer, head)`` pairs, the source in
        an earlier layer; ``part`` is ``"q"``, ``"k"`` or ``"v"``. The target head computes
        that part from the residual stream *minus* what the source head wrote into it in this
        same pass, ``(x − out_source) W_part[target]``; everything else (its other parts,
        other heads, the logits' direct path) reads the whole stream. Listing a path twice
        removes it once. The ``q``, ``k``, ``v`` and ``weights`` of the cache are the ablated
        ones; ``residual`` is the stream itself. Default: none, and ``forward`` is unchanged.

    Returns
    -------
    logits : ndarray, shape (batch, n, vocab)
        Position ``p``'s prediction of the token at ``p + 1``.
    cache : Cache

    Raises
    ------
    ValueError
        For parameters of the wrong names or shapes, tokens that are not a 2-D int array in
        range or longer than ``n_ctx``, a bad ``ablate`` pair or a bad ``ablate_paths`` triple.

    Examples
    --------
    >>> p = init_params(ModelConfig(vocab=5, n_ctx=4, d_model=4, n_heads=1, d_head=2))
    >>> logits, cache = forward(p, [[0, 1, 2]], ablate=[(1, 0)])
    >>> logits.shape, cache.keep[1].tolist()
    ((1, 3, 5), [0.0])

    Remove head (0, 0)'s output from the keys of head (1, 0) only: layer 1's pattern changes,
    layer 0's cannot.

    >>> _, full = forward(p, [[0, 1, 2]])
    >>> _, cut = forward(p, [[0, 1, 2]], ablate_paths=[((0, 0), (1, 0), "k")])
    >>> bool(np.allclose(cut.weights[0], full.weights[0]))
    True
    >>> bool(np.allclose(cut.k[1], full.k[1])), bool(np.allclose(cut.q[1], full.q[1]))
    (False, True)

    References
    ----------
    Elhage, N. et al. (2021). A mathematical framework for transformer circuits. *Transformer
    Circuits Thread*: Q-, K- and V-composition, and ablating one path of a head's output.
    """
    config, params = _checked(params) if check else (_config_unchecked(params), params)
    tokens = _check_tokens(tokens, config)
    keep = _check_ablate(ablate, config)
    paths = _check_paths(ablate_paths, config)  # {target layer: [(head, part, sources)]}
    writes = {}  # (layer, head) -> (batch, n, d_model): a source head's output, if paths
    batch, n = tokens.shape
    c = 1.0 / math.sqrt(config.d_head)
    hidden = np.triu(np.full((n, n), -np.inf), 1)  # (n, n) -inf on the keys in the future
    x = params["embed"][tokens] + params["pos"][:n]  # (batch, n, d_model)
    residual, qs, ks, vs, ws, mixes = [x], [], [], [], [], []
    for layer in range(config.n_layers):
        x2d = x.reshape(batch * n, -1)  # (batch·n, d_model)
        q = _heads_in(x2d, params[f"w_q.{layer}"], batch, n)  # (batch, H, n, d_head)
        k = _heads_in(x2d, params[f"w_k.{layer}"], batch, n)  # (batch, H, n, d_head)
        v = _heads_in(x2d, params[f"w_v.{layer}"], batch, n)  # (batch, H, n, d_head)
        for head, part, sources in paths.get(layer, ()):
            removed = writes[sources[0]]  # (batch, n, d_model) what the target must not read
            for source in sources[1:]:
                removed = removed + writes[source]  # (batch, n, d_model)
            w = params[f"w_{part}.{layer}"][head]  # (d_model, d_head)
            {"q": q, "k": k, "v": v}[part][:, head] -= removed @ w  # (batch, n, d_head)
        scores = q @ k.swapaxes(-1, -2)  # (batch, H, n, n)
        scores *= c
        scores += hidden  # (batch, H, n, n) causal: -inf above the diagonal
        weights = _kernels.softmax_in_place(scores)  # (batch, H, n, n), in scores
        mixed = weights @ v  # (batch, H, n, d_head)
        if not keep[layer].all():
            mixed *= keep[layer].astype(mixed.dtype)[:, None, None]  # ablated heads write 0
        w_o = params[f"w_o.{layer}"]  # (H, d_head, d_model)
        for head in paths.get("sources", {}).get(layer, ()):
            writes[(layer, head)] = mixed[:, head] @ w_o[head]  # (batch, n, d_model)
        out = _heads_out(mixed) @ w_o.reshape(-1, w_o.shape[-1])  # (batch·n, d_model)
        x = x + out.reshape(x.shape)  # (batch, n, d_model)
        residual.append(x)
        qs.append(q), ks.append(k), vs.append(v), ws.append(weights), mixes.append(mixed)
    logits = x @ params["unembed"]  # (batch, n, vocab)
    cache = Cache(tokens, tuple(residual), *map(tuple, (qs, ks, vs, ws, mixes, keep)))
    return logits, cache


def position_losses(
    params, tokens, ablate=None, check: bool = True, *, ablate_paths=None
) -> np.ndarray:
    """The loss ``−ln p(token at p + 1)`` at every position ``p`` (0 at the last one).

    Parameters
    ----------
    params, tokens, ablate, check, ablate_paths
        As for :func:`forward`.

    Returns
    -------
    ndarray, shape (batch, n)
        Nats; average it over a mask of :class:`attnlab.repeated_tokens.RepeatBatch` to get the
        loss on one half.

    Examples
    --------
    >>> p = init_params(ModelConfig(vocab=4, n_ctx=3, d_model=4, n_heads=1, d_head=2))
    >>> position_losses(p, [[0, 1, 2]]).shape
    (1, 3)
    """
    logits, cache = forward(params, tokens, ablate, check, ablate_paths=ablate_paths)
    return next_token_losses(logits, cache.tokens)  # (batch, n)


def next_token_losses(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """``−ln softmax(logits[:, p])[tokens[:, p + 1]]`` for every ``p``, 0 at the last position.

    Unchecked (the logits of :func:`forward` and its checked tokens).

    Parameters
    ----------
    logits : ndarray, shape (batch, n, vocab)
    tokens : ndarray of int, shape (batch, n)

    Returns
    -------
    ndarray, shape (batch, n)

    Examples
    --------
    >>> next_token_losses(np.zeros((1, 2, 4)), np.array([[0, 3]])).round(4).tolist()
    [[1.3863, 0.0]]
    """
    log_p = _log_softmax(logits[:, :-1])  # (batch, n − 1, vocab)
    losses = np.zeros(tokens.shape, dtype=log_p.dtype)  # (batch, n)
    losses[:, :-1] = -np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1)[..., 0]
    return losses


def loss_and_grads(params, tokens, loss_mask, ablate=None, check: bool = True):
    r"""The mean next-token loss over ``loss_mask``, and its gradient for every parameter.

    ``loss = −(1/m) Σ_{(b, p) in mask} ln softmax(logits[b, p])[tokens[b, p + 1]]``, ``m`` the
    number of masked positions. The gradient flows back through the unembedding, each layer's
    residual sum and each head (lesson 9's attention backward), to the embeddings.

    Parameters
    ----------
    params, tokens, ablate, check
        As for :func:`forward`.
    loss_mask : array_like of bool, shape (batch, n)
        The predicting positions that count; the last column must be False (it has no target)
        and at least one entry True.

    Returns
    -------
    loss : float
    grads : dict of str to ndarray
        ``∂loss/∂θ`` for each parameter, with its name and shape.
    cache : Cache

    Raises
    ------
    ValueError
        As :func:`forward`, and for a mask of the wrong shape or dtype, with nothing to
        average, or marking the last position.

    Examples
    --------
    >>> p = init_params(ModelConfig(vocab=4, n_ctx=3, d_model=4, n_heads=1, d_head=2))
    >>> loss, grads, _ = loss_and_grads(p, [[0, 1, 2]], [[True, True, False]])
    >>> sorted(grads) == sorted(p), grads["w_q.1"].shape, loss > 0
    (True, (1, 4, 2), True)
    """
    config, params = _checked(params) if check else (_config_unchecked(params), params)
    logits, cache = forward(params, tokens, ablate=ablate, check=False)  # (batch, n, vocab)
    tokens = cache.tokens
    mask = np.asarray(loss_mask)
    if mask.dtype != bool or mask.shape != tokens.shape:
        raise ValueError(
            f"loss_mask must be a bool array shaped like tokens {tokens.shape}, got shape "
            f"{mask.shape} and dtype {mask.dtype}"
        )
    count = int(mask.sum())
    if count == 0 or mask[:, -1].any():
        raise ValueError(
            "loss_mask must mark at least one position and never the last one (it has no "
            f"next token): {count} marked, {int(mask[:, -1].sum())} in the last column"
        )
    batch, n = tokens.shape
    c = 1.0 / math.sqrt(config.d_head)

    # ---------------------------------------------------------------- the loss
    log_p = _log_softmax(logits)  # (batch, n, vocab)
    nxt = np.zeros_like(tokens)  # (batch, n) next token; the last column is masked out
    nxt[:, :-1] = tokens[:, 1:]
    picked = np.take_along_axis(log_p, nxt[..., None], axis=-1)[..., 0]  # (batch, n)
    loss = -float(picked[mask].sum()) / count
    d_logits = np.exp(log_p)  # (batch, n, vocab) softmax
    rows, cols = np.nonzero(mask)
    d_logits[rows, cols, nxt[rows, cols]] -= 1.0
    d_logits *= mask[..., None] / count  # (batch, n, vocab) ∂loss/∂logits

    # ---------------------------------------------------------------- unembedding
    grads = {}
    x = cache.residual[-1]  # (batch, n, d_model)
    grads["unembed"] = x.reshape(batch * n, -1).T @ d_logits.reshape(batch * n, -1)
    dx = d_logits @ params["unembed"].T  # (batch, n, d_model) ∂loss/∂(final residual)

    # ---------------------------------------------------------------- layers, last first
    for layer in reversed(range(config.n_layers)):
        dx2d = dx.reshape(batch * n, -1)  # (batch·n, d_model)
        w_o = params[f"w_o.{layer}"]  # (H, d_head, d_model)
        mixed = cache.mixed[layer]  # (batch, H, n, d_head)
        grads[f"w_o.{layer}"] = (_heads_out(mixed).T @ dx2d).reshape(w_o.shape)
        d_mixed = dx2d @ w_o.reshape(-1, w_o.shape[-1]).T  # (batch·n, H·d_head)
        d_mixed = d_mixed.reshape(batch, n, config.n_heads, -1).transpose(0, 2, 1, 3)
        if not cache.keep[layer].all():
            d_mixed = d_mixed * cache.keep[layer].astype(d_mixed.dtype)[:, None, None]
        dq, dk, dv = _kernels.attention_backward_unchecked(
            cache.q[layer], cache.k[layer], cache.v[layer], cache.weights[layer], d_mixed, c
        )  # (batch, H, n, d_head) each: lesson 9's backward pass, every head at once
        x_in = cache.residual[layer].reshape(batch * n, -1)  # (batch·n, d_model)
        dx_in = dx2d.copy()  # (batch·n, d_model) the residual path
        for name, d in (("w_q", dq), ("w_k", dk), ("w_v", dv)):
            w = params[f"{name}.{layer}"]  # (H, d_model, d_head)
            d2d = _heads_out(d)  # (batch·n, H·d_head)
            w2d = w.transpose(1, 0, 2).reshape(w.shape[1], -1)  # (d_model, H·d_head)
            grads[f"{name}.{layer}"] = (
                (x_in.T @ d2d).reshape(w.shape[1], w.shape[0], -1).transpose(1, 0, 2)
            )  # (H, d_model, d_head)
            dx_in += d2d @ w2d.T  # (batch·n, d_model)
        dx = dx_in.reshape(batch, n, -1)  # (batch, n, d_model)

    # ---------------------------------------------------------------- embeddings
    dx2d = dx.reshape(batch * n, -1)  # (batch·n, d_model)
    grads["embed"] = np.zeros_like(params["embed"])  # (vocab, d_model)
    np.add.at(grads["embed"], tokens.reshape(-1), dx2d)
    grads["pos"] = np.zeros_like(params["pos"])  # (n_ctx, d_model)
    grads["pos"][:n] = dx.sum(axis=0)
    return loss, {name: grads[name] for name in params}, cache


# ---------------------------------------------------------------- private helpers
def _shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    c = config
    shapes = {"embed": (c.vocab, c.d_model), "pos": (c.n_ctx, c.d_model)}
    for layer in range(c.n_layers):
        for name in ("w_q", "w_k", "w_v"):
            shapes[f"{name}.{layer}"] = (c.n_heads, c.d_model, c.d_head)
        shapes[f"w_o.{layer}"] = (c.n_heads, c.d_head, c.d_model)
    shapes["unembed"] = (c.d_model, c.vocab)
    return shapes


def _check_tokens(tokens, config: ModelConfig) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.dtype.kind not in "iu" or arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(
            f"tokens must be a 2-D int array (batch, n) with n >= 1, got shape {arr.shape} "
            f"and dtype {arr.dtype}"
        )
    if arr.shape[1] > config.n_ctx:
        raise ValueError(
            f"tokens has {arr.shape[1]} positions (shape {arr.shape}) but the position "
            f"embedding has n_ctx = {config.n_ctx} rows"
        )
    if arr.size and (arr.min() < 0 or arr.max() >= config.vocab):
        raise ValueError(
            f"tokens must lie in 0 … {config.vocab - 1} (vocab = {config.vocab}), got values "
            f"from {arr.min()} to {arr.max()}"
        )
    return arr


def _check_ablate(ablate, config: ModelConfig) -> list[np.ndarray]:
    """One keep vector (n_heads,) per layer: 0.0 for each (layer, head) in ``ablate``."""
    keep = [np.ones(config.n_heads) for _ in range(config.n_layers)]
    for pair in ablate or ():
        ok = (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in pair)
        )
        if not ok or not (0 <= pair[0] < config.n_layers and 0 <= pair[1] < config.n_heads):
            raise ValueError(
                f"ablate must hold (layer, head) pairs with 0 <= layer < {config.n_layers} and "
                f"0 <= head < {config.n_heads}, got {pair!r}"
            )
        keep[pair[0]][pair[1]] = 0.0
    return keep


def _check_paths(ablate_paths, config: ModelConfig) -> dict:
    """``ablate_paths`` checked and grouped for :func:`forward`; ``{}`` when there are none.

    Returns ``{target layer: [(target head, part, sources)], "sources": {layer: heads}}``:
    per target layer, what each of its heads' parts must not read; and which heads' outputs
    forward has to keep apart for that.
    """
    if ablate_paths is None:
        return {}
    if isinstance(ablate_paths, str | bytes) or not hasattr(ablate_paths, "__iter__"):
        raise ValueError(
            "ablate_paths must be an iterable of (source, target, part) triples, got "
            f"{type(ablate_paths).__name__}"
        )

    def is_head(pair) -> bool:
        return (
            isinstance(pair, tuple | list)
            and len(pair) == 2
            and all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in pair)
            and 0 <= pair[0] < config.n_layers
            and 0 <= pair[1] < config.n_heads
        )

    grouped: dict = {}
    for path in ablate_paths:
        ok = (
            isinstance(path, tuple | list)
            and len(path) == 3
            and is_head(path[0])
            and is_head(path[1])
            and path[0][0] < path[1][0]
            and isinstance(path[2], str)
            and path[2] in ("q", "k", "v")
        )
        if not ok:
            raise ValueError(
                "ablate_paths must hold (source, target, part) triples: source and target "
                f"(layer, head) pairs with 0 <= layer < {config.n_layers} and 0 <= head < "
                f"{config.n_heads}, the source's layer before the target's, part 'q', 'k' or "
                f"'v'; got {path!r}"
            )
        (s_layer, s_head), (t_layer, t_head), part = path
        key = (int(t_layer), int(t_head), part)
        grouped.setdefault(key, set()).add((int(s_layer), int(s_head)))
    paths: dict = {"sources": {}}
    for (t_layer, t_head, part), sources in sorted(grouped.items()):
        paths.setdefault(t_layer, []).append((t_head, part, sorted(sources)))
        for s_layer, s_head in sources:
            paths["sources"].setdefault(s_layer, set()).add(s_head)
    return paths


def _heads_in(x2d: np.ndarray, w: np.ndarray, batch: int, n: int) -> np.ndarray:
    """``x @ w[h]`` for every head at once: (batch·n, d_model), (H, d_model, e) → (batch, H, n, e).

    One matrix product through BLAS instead of ``batch · H`` small ones.
    """
    h, d, e = w.shape
    out = x2d @ w.transpose(1, 0, 2).reshape(d, h * e)  # (batch·n, H·e)
    # contiguous, so the per-head products below go through BLAS, not numpy's slow loop
    return np.ascontiguousarray(out.reshape(batch, n, h, e).transpose(0, 2, 1, 3))


def _heads_out(mixed: np.ndarray) -> np.ndarray:
    """(batch, H, n, e) → (batch·n, H·e): the heads side by side, one row per token."""
    b, h, n, e = mixed.shape
    return mixed.transpose(0, 2, 1, 3).reshape(b * n, h * e)  # (batch·n, H·e)


def _config_unchecked(params) -> ModelConfig:
    vocab, d_model = np.shape(params["embed"])
    if "w_q.0" in params:
        n_heads, _, d_head = np.shape(params["w_q.0"])
    else:  # the zero-layer model has no heads
        n_heads, d_head = ModelConfig.n_heads, ModelConfig.d_head
    n_layers = 0
    while f"w_q.{n_layers}" in params:
        n_layers += 1
    n_ctx = np.shape(params["pos"])[0]
    return ModelConfig(vocab, n_ctx, d_model, n_layers, n_heads, d_head)


def _checked(params) -> tuple[ModelConfig, dict]:
    """The config of ``params`` (validated) and the parameters as float arrays (a new dict)."""
    config = config_of(params)
    return config, {name: _validate.as_float_array(a, name) for name, a in params.items()}


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-softmax along the last axis of finite logits (the unchecked core, lesson 3)."""
    s = logits - logits.max(axis=-1, keepdims=True)  # (..., vocab), max 0
    return s - _kernels.logsumexp_shifted(s, -1)  # (..., vocab)
