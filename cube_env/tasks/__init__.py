"""Question-style tasks beside the episode protocol: items, strict answer forms, exact labels, metrics.

:mod:`.items` holds the machinery every question test shares (items, prompts, replies, the
``QuestionTest`` base), :mod:`.parsing` the strict answer formats, :mod:`.metrics` the scores,
:mod:`.oracle` the exact distances the labels come from, :mod:`.registry` the tests by name;
:mod:`.cube_bench` has Cube Bench's seven tests.
"""
