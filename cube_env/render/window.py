"""``render_mode="human"``: the net in a window, only where a display exists.

Gymnasium's ``check_env`` opens every declared render mode, so ``human`` is
declared only when a display is present (``DISPLAY`` or ``WAYLAND_DISPLAY``);
asking for it elsewhere raises a clear error instead of hanging.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from ..extras import install_hint

if TYPE_CHECKING:
    from matplotlib.image import AxesImage


_FILE_BACKENDS = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}
"""matplotlib backends that draw into files or memory, never onto a screen."""


def display_available() -> bool:
    """True when a graphical display is reachable."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class Window:
    """A matplotlib window that shows successive RGB frames (matplotlib is the ``report`` extra)."""

    def __init__(self, title: str = "CubeBench") -> None:
        if not display_available():
            raise RuntimeError("render_mode='human' needs a display (DISPLAY is not set); use 'rgb_array' or 'ansi'")
        try:
            import matplotlib.pyplot as plt
        except ImportError as err:
            raise RuntimeError(f"render_mode='human' needs matplotlib: {install_hint('report')}") from err
        if plt.get_backend().lower() in _FILE_BACKENDS:
            raise RuntimeError(f"matplotlib has no GUI backend here (it chose {plt.get_backend()!r}); "
                               "install Tk (e.g. the python3-tk package) or set MPLBACKEND to a GUI backend")
        self._plt = plt
        self._fig, self._ax = plt.subplots(num=title)
        self._ax.axis("off")
        self._image: AxesImage | None = None

    def show(self, frame: np.ndarray) -> None:
        if self._image is None:
            self._image = self._ax.imshow(frame)
            self._plt.show(block=False)
        else:
            self._image.set_data(frame)
        self._fig.canvas.draw_idle()
        self._plt.pause(0.001)

    def close(self) -> None:
        self._plt.close(self._fig)
