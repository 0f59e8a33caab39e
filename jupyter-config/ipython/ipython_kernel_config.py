"""The course's kernel configuration: a NameError for a course name is one sentence.

After a kernel restart, a check cell run alone said ``NameError: name 'lesson3' is not
defined`` in six lines; ``attnlab.restart_help`` says what to run instead. ``pip install .``
(Binder, the hub images) copies this file into the environment's ``etc/ipython`` (where
IPython reads it: pyproject.toml, data-files); ``./run.sh lab`` copies it there too (an
editable install copies no data files).
"""

c = get_config()  # noqa: F821 (provided by traitlets when it runs this file)
c.InteractiveShellApp.extra_extensions = ["attnlab.restart_help"]
