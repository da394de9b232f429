"""STARE's cube-net folding (``shared/seeds/004_...``, §2.2, §3) as question tests on CubeBench's item machinery.

:mod:`.polyomino` enumerates polyominoes exactly; :mod:`.rolling` decides whether a hexomino folds into
a cube by rolling the engine's cube over it; :mod:`.folding` folds a net in 3D step by step (STARE App.
F.3); :mod:`.nets` is the catalogue (the 11 nets, near-misses, the pools per depth); :mod:`.shown` is a
net as an item presents it.  The tests: :class:`NetFold` (yes/no in the paper's three setups, as
text, and in its ablations and probes: image+text, 0-3/partial/last frames, the final form, interleaved frames,
perturbed fold steps), :class:`NetChoice` (which of four folds) and :class:`NetPerception` (the paper's probes).
See ``docs/stare.md``.
"""

from .net_choice import NetChoice
from .net_fold import NetFold
from .perception import NetPerception

STARE_TESTS = (NetFold(), NetChoice(), NetPerception())
"""One instance of each STARE test (the tests keep no state)."""

__all__ = ["STARE_TESTS", "NetFold", "NetChoice", "NetPerception"]
