"""Question-style tasks beside the episodes: items, answer rules and reply forms, exact labels, metrics.

:mod:`.items` holds the machinery every question test shares (items, prompts, replies, the
``QuestionTest`` base), :mod:`.rules` the answer rules (``paper``, ``strict``, ``release``), :mod:`.parsing`
the reply forms, :mod:`.metrics` the scores, :mod:`.registry` the tests by name (the exact distances the labels
come from are ``cubebench.solver.oracle``); :mod:`.cube_bench`, :mod:`.inf_bench` and :mod:`.stare` hold each
paper's tests and its own prompt text.
"""
