"""What the forbidden-call rule reads: the course functions a forbidden name stands for, what a
forbidden function computes with, and what may run inside each allowed building block.

An exercise names what it forbids (``Exercise(..., forbidden=...)``: functions, whole modules,
names of the notebook; :data:`SOFTMAX_LIBRARY` is the group several lessons share). This
registry says what those names stand for, in plain data, so no rule depends on how a function
is spelled (a leading underscore) or on a module's ``__all__``:

* :data:`WHOLE_MODULES`: a whole module named in ``forbidden=`` stands for these functions and
  classes (each module's API; ``tests/test_numerics_import.py`` checks that ``__all__`` says
  the same);
* :data:`COMPUTES_WITH`: forbidding a function also forbids the helpers it computes with, and
  every course function that calls into one of them
  (:func:`attnlab.exercises.rules.reach.reaching_codes`);
* :data:`RUNS_INSIDE`: the course's building blocks (what ``import attnlab`` gives) stay
  allowed unless an exercise names them, and so does every course function that runs inside
  an allowed one (``tests/test_forbidden_registry.py`` checks these lists against the code).

Names are qualified by the module that defines them; a class stands for its methods
(``"attnlab.backward.AttentionGrads"``), ``"module.Class.method"`` for one of them.
"""

from __future__ import annotations

#: Every library function that computes a softmax, whole modules included (naive, stable,
#: masked, online, tiled, inside attention): forbidden where an exercise is to write one. The
#: package-internal cores of the whole-row softmax (in :mod:`attnlab._kernels`) are named too.
SOFTMAX_LIBRARY = (
    "attnlab.softmax",
    "attnlab.log_softmax",
    "attnlab.softmax_family",
    "attnlab._kernels.softmax_in_place",
    "attnlab._kernels.logsumexp_shifted",
    "attnlab._kernels.normalised_exp",  # the core of softmax_in_place and of softmax itself
    "attnlab.online",
    "attnlab.tiling",
    "attnlab.scaled_dot_product_attention",
    "attnlab.attention.scaled_dot_product_attention",
    "scipy.special.softmax",
    "scipy.special.log_softmax",
    "scipy.special.logsumexp",  # exp(x - logsumexp(x)) is the stable softmax in one line
)

#: Module -> the names a whole forbidden module stands for: the functions and classes (with
#: their methods) of its API, the course helpers an answer could hand in
#: (:mod:`attnlab.exercises.kit.passing_helpers`).
WHOLE_MODULES: dict[str, tuple[str, ...]] = {
    "attnlab.softmax_family": (
        "softmax",
        "naive_softmax",
        "naive_overflow_thresholds",
        "logsumexp",
        "log_softmax",
        "softmax_jacobian",
        "entropy",
    ),
    "attnlab.attention": (
        "scaled_dot_product_attention",
        "attention_scores",
        "causal_mask",
        "padding_mask",
    ),
    "attnlab.patterns": (
        "PATTERNS",
        "TITLES",
        "PatternExample",
        "column_mass",
        "diagonal_mass",
        "effective_keys",
        "normalised_entropy",
        "pattern_example",
        "strongest_links",
    ),
    "attnlab.mixing": ("barycentric", "coordinate_bounds", "weighted_values"),
    "attnlab.online": ("online_softmax_update", "online_normaliser", "online_softmax"),
    "attnlab.tiling": ("tiled_attention",),
    "attnlab.backward": (
        "AttentionGrads",
        "SelfAttentionGrads",
        "attention_backward",
        "finite_difference_gradient",
        "self_attention",
        "self_attention_backward",
        "softmax_vjp",
    ),
    "attnlab.training": tuple(
        "PROBE TOKENS OPTIMIZERS AdamState Head Run TrainingStopped adam_init adam_step "
        "anti_diagonal_mass encode head_forward init_head loss_and_grads reverse_batch sgd_step "
        "train".split()
    ),
    "attnlab.sqrt_dk": (
        "CAP",
        "EXTRA",
        "EXTRA_CONFIG",
        "NUDGE",
        "extra_setting",
        "nudge_gap",
        "over_reruns",
        "rerun_index",
        "variant_best",
        "panel",
        "lesson_claims",
        "tables_text",
        "load_extra",
        "mup_rates",
        "start_head",
        "CONFIG",
        "EVAL_EVERY",
        "SHARED_LR",
        "SHIPPED",
        "best_rate",
        "by_setting",
        "exponent_name",
        "init_record",
        "init_summary",
        "is_interior",
        "load_shipped",
        "run_steps",
        "search_window",
        "seed_values",
        "slowest",
        "settings",
        "start_steadiness",
        "steps_table",
        "tied_rates",
    ),
    "attnlab.positions": tuple(
        "position_frequencies sinusoidal_positions learned_positions rope_angles apply_rope "
        "rope_scores alibi_slopes alibi_bias permute_tokens".split()
    ),
    "attnlab.repeated_tokens": ("PAD", "RepeatBatch", "chance_loss", "repeated_batch"),
    "attnlab.attention_only": tuple(
        "Cache ModelConfig check_params config_of forward init_params loss_and_grads "
        "next_token_losses position_losses".split()
    ),
    "attnlab.induction": tuple(
        "ADAM_BETAS ADAM_EPS Circuit EVAL_SEED Evaluation InductionConfig InductionStopped "
        "PhaseChange Progress Run adam_init adam_step chance_loss copying_score "
        "diagonal_top_share evaluate eval_batch induction_score one_blas_thread ov_circuit "
        "phase_change previous_token_score read_circuit train training".split()
    ),
    "attnlab.examples": (
        "cat_sat_down",
        "cat_sat_down_wide",
        "dog_bites_man",
        "please_study_man",
        "query_and_keys_2d",
    ),
}

#: The package's internal modules the numerics share (checks, unchecked cores): their functions
#: are part of the course's call graph (:mod:`attnlab.exercises.rules.reach`), as the numerics' are.
#: Course functions never tried as an answer by
#: :func:`attnlab.exercises.kit.passing_helpers.helpers_that_pass`, and why: callable with no
#: arguments, each would run in full in the first check of every exercise whose answer takes
#: none (a quiz question, a fixed fact), in a learner's kernel and in grading, and what it
#: returns is no exercise's answer.
NOT_TRIED_AS_ANSWERS: dict[str, str] = {
    "attnlab.induction.train": "trains lesson 11's model, about 10 s, and returns a Run",
}

SHARED_MODULES = ("attnlab._checks", "attnlab._kernels")

#: Forbidden function -> the helpers it computes with: forbidding the function forbids them
#: too, and every course function that calls into them (``training.head_forward`` runs the
#: softmax through ``_kernels.softmax_in_place``), unless an allowed building block runs them
#: (:data:`RUNS_INSIDE`). A function not listed computes with nothing of its own. The helpers
#: are the ones few API functions share: argument checks and other utilities are not listed.
COMPUTES_WITH: dict[str, tuple[str, ...]] = {
    "attnlab.attention.attention_scores": (
        "attnlab._checks.check_qk",
        "attnlab._kernels.scaled_scores",
    ),
    "attnlab.attention.scaled_dot_product_attention": (
        "attnlab.attention._allowed",
        "attnlab._kernels.scaled_scores",
        "attnlab._kernels.softmax_in_place",
    ),
    "attnlab.backward.attention_backward": (
        "attnlab.backward.AttentionGrads",
        "attnlab.backward._sum_to",
        "attnlab._kernels.attention_backward_unchecked",
    ),
    "attnlab.backward.finite_difference_gradient": ("attnlab.backward._scalar",),
    "attnlab.backward.self_attention": ("attnlab.backward._check_projections",),
    "attnlab.backward.self_attention_backward": (
        "attnlab.backward.SelfAttentionGrads",
        "attnlab.backward._check_projections",
        "attnlab.backward._project_back",
    ),
    "attnlab.backward.softmax_vjp": ("attnlab._kernels.softmax_vjp_unchecked",),
    "attnlab.online.online_normaliser": (
        "attnlab.online._blocks",
        "attnlab.online._prepare",
    ),
    "attnlab.online.online_softmax": ("attnlab.online._prepare",),
    "attnlab.online.online_softmax_update": ("attnlab.online._no_posinf",),
    "attnlab.patterns.pattern_example": ("attnlab.patterns.PatternExample",),
    "attnlab.positions.apply_rope": ("attnlab.positions._rotate",),
    "attnlab.positions.rope_scores": ("attnlab.positions._rotate",),
    "attnlab.softmax_family.log_softmax": ("attnlab._kernels.logsumexp_shifted",),
    "attnlab.softmax_family.logsumexp": (
        "attnlab.softmax_family._keepdims",
        "attnlab._kernels.logsumexp_shifted",
    ),
    "attnlab.softmax_family.softmax": ("attnlab._kernels.normalised_exp",),
    "attnlab._kernels.softmax_in_place": ("attnlab._kernels.normalised_exp",),
    "attnlab.sqrt_dk.init_record": ("attnlab.sqrt_dk._round",),
    "attnlab.sqrt_dk.lesson_claims": ("attnlab.sqrt_dk._range_name",),
    "attnlab.sqrt_dk.steps_table": ("attnlab.sqrt_dk._steps_name",),
    "attnlab.sqrt_dk.tables_text": (
        "attnlab.sqrt_dk._grid_text",
        "attnlab.sqrt_dk._range_name",
        "attnlab.sqrt_dk._stats",
        "attnlab.sqrt_dk._steps_name",
    ),
    "attnlab.tiling.tiled_attention": (
        "attnlab._checks.cannot_overflow",
        "attnlab._checks.check_causal",
        "attnlab._checks.check_mask",
        "attnlab.tiling._block_sizes",
        "attnlab.tiling._tile_scores",
    ),
    "attnlab.training.adam_init": ("attnlab.training.AdamState",),
    "attnlab.training.adam_step": ("attnlab.training.AdamState",),
    "attnlab.training.head_forward": (
        "attnlab._kernels.softmax_in_place",
        "attnlab.training._rows_times",
    ),
    "attnlab.training.loss_and_grads": (
        "attnlab._kernels.attention_backward_unchecked",
        "attnlab.training._log_softmax_of_finite",
        "attnlab.training._sum_of_outer",
    ),
    "attnlab.training.train": (
        "attnlab.training.Run.__delattr__",
        "attnlab.training.Run.__eq__",
        "attnlab.training.Run.__hash__",
        "attnlab.training.Run.__init__",
        "attnlab.training.Run.__repr__",
        "attnlab.training.Run.__setattr__",
        "attnlab.training.TrainingStopped",
        "attnlab.training._log_softmax_of_finite",
    ),
}

#: The course's building blocks (the functions ``import attnlab`` gives) -> every course
#: function that runs inside it. An exercise that allows a block allows what runs inside it:
#: ``attnlab.softmax``'s ``normalised_exp`` also serves ``softmax_in_place``, and 7.4 allows
#: ``softmax`` and ``attention_scores``. A block itself is never forbidden by reaching: an
#: exercise that refuses one names it.
RUNS_INSIDE: dict[str, tuple[str, ...]] = {
    "attnlab.attention_backward": (
        "attnlab.attention._allowed",
        "attnlab._checks.check_batch",
        "attnlab._checks.check_qk_fit",
        "attnlab._checks.cannot_overflow",
        "attnlab._checks.check_causal",
        "attnlab._checks.check_mask",
        "attnlab._checks.check_matrices",
        "attnlab._checks.check_qkv",
        "attnlab._checks.resolve_scale",
        "attnlab.attention.scaled_dot_product_attention",
        "attnlab._kernels.scaled_scores",
        "attnlab._checks.shapes_of",
        "attnlab.backward.AttentionGrads",
        "attnlab.backward._sum_to",
        "attnlab._kernels.attention_backward_unchecked",
        "attnlab._kernels.softmax_vjp_unchecked",
        "attnlab._kernels.normalised_exp",
        "attnlab._kernels.softmax_in_place",
    ),
    "attnlab.attention_scores": (
        "attnlab._checks.check_batch",
        "attnlab._checks.check_qk",
        "attnlab._checks.check_qk_fit",
        "attnlab._checks.cannot_overflow",
        "attnlab._checks.check_matrices",
        "attnlab._checks.resolve_scale",
        "attnlab._kernels.scaled_scores",
        "attnlab._checks.shapes_of",
    ),
    "attnlab.causal_mask": (),
    "attnlab.entropy": (),
    "attnlab.log_softmax": (
        "attnlab.softmax_family._posinf_as_winners",
        "attnlab.softmax_family._prepare",
        "attnlab.softmax_family._shifted",
        "attnlab._kernels.logsumexp_shifted",
    ),
    "attnlab.logsumexp": (
        "attnlab.softmax_family._keepdims",
        "attnlab.softmax_family._posinf_as_winners",
        "attnlab.softmax_family._prepare",
        "attnlab.softmax_family._shifted",
        "attnlab._kernels.logsumexp_shifted",
    ),
    "attnlab.naive_softmax": (),
    "attnlab.online_normaliser": (
        "attnlab.online._blocks",
        "attnlab.online._no_posinf",
        "attnlab.online._prepare",
        "attnlab._kernels.fold_block",
    ),
    "attnlab.online_softmax": (
        "attnlab.online._blocks",
        "attnlab.online._no_posinf",
        "attnlab.online._prepare",
        "attnlab._kernels.fold_block",
        "attnlab.online.online_normaliser",
    ),
    "attnlab.online_softmax_update": (
        "attnlab.online._no_posinf",
        "attnlab._kernels.fold_block",
    ),
    "attnlab.padding_mask": (),
    "attnlab.scaled_dot_product_attention": (
        "attnlab.attention._allowed",
        "attnlab._checks.check_batch",
        "attnlab._checks.check_qk_fit",
        "attnlab._checks.cannot_overflow",
        "attnlab._checks.check_causal",
        "attnlab._checks.check_mask",
        "attnlab._checks.check_matrices",
        "attnlab._checks.check_qkv",
        "attnlab._checks.resolve_scale",
        "attnlab._kernels.scaled_scores",
        "attnlab._checks.shapes_of",
        "attnlab._kernels.normalised_exp",
        "attnlab._kernels.softmax_in_place",
    ),
    "attnlab.softmax": (
        "attnlab._kernels.normalised_exp",
        "attnlab.softmax_family._posinf_as_winners",
        "attnlab.softmax_family._prepare",
        "attnlab.softmax_family._shifted",
    ),
    "attnlab.softmax_jacobian": (),
    "attnlab.softmax_vjp": ("attnlab._kernels.softmax_vjp_unchecked",),
    "attnlab.tiled_attention": (
        "attnlab._checks.check_batch",
        "attnlab._checks.check_qk_fit",
        "attnlab._checks.cannot_overflow",
        "attnlab._checks.check_causal",
        "attnlab._checks.check_mask",
        "attnlab._checks.check_matrices",
        "attnlab._checks.check_qkv",
        "attnlab._checks.resolve_scale",
        "attnlab._kernels.scaled_scores",
        "attnlab._checks.shapes_of",
        "attnlab._kernels.fold_block",
        "attnlab.tiling._block_sizes",
        "attnlab.tiling._tile_scores",
    ),
}
