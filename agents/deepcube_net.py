"""The DeepCubeA-style cost-to-go network at play time: its input encoding and a NumPy forward pass.

The network maps a cube (engine state in reference orientation: centres in place) to an estimate of how many
quarter turns it lies from solved.  Its input is the one-hot colour of the 48 stickers that move (the six centres
never do under face turns), 288 numbers; its body is a plain ReLU MLP with optional residual blocks.  Training
(``cubebench.training.deepcube``, torch) and play (here, NumPy only: the agent needs no torch) share
:func:`encode` and the weights file's layout, so what was trained is what is played.

Weights file (``.npz``): ``hidden`` (the widths of the plain layers), ``res_blocks`` (how many residual blocks of
the last width follow), then ``w{k}``/``b{k}`` for every linear layer in order (``w`` shaped (out, in), as torch
stores it), and ``meta`` (a JSON string: how it was trained).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np

from cubebench.engine.facelets import CENTRES, N_STICKERS

MOVING_STICKERS = np.array([i for i in range(N_STICKERS) if i not in set(CENTRES)], dtype=np.int64)
"""The 48 sticker positions a face turn can change (every position but the six centres)."""
VALUE_INPUTS = 6 * len(MOVING_STICKERS)
"""Inputs of the network: one-hot colour (6) of each moving sticker."""
DEEPCUBE_WEIGHTS = Path(str(files("cubebench.agents") / "deepcube_value.npz"))
"""The shipped network (package data, made by ``python -m cubebench.training.deepcube``; docs/deepcube.md)."""
_EYE = np.eye(6, dtype=np.float32)


def encode(states: np.ndarray) -> np.ndarray:
    """(B, 288) float32 network input of (B, 54) engine states (one-hot colour of each moving sticker)."""
    states = np.asarray(states)
    if states.ndim != 2 or states.shape[1] != N_STICKERS:
        raise ValueError(f"states must be shaped (B, {N_STICKERS}), got {states.shape}")
    return _EYE[states[:, MOVING_STICKERS] // 9].reshape(len(states), VALUE_INPUTS)


def layer_names(hidden: tuple[int, ...], res_blocks: int) -> list[str]:
    """The linear layers of a network, in order: ``lin{k}`` for the plain layers, ``res{k}a``/``res{k}b`` for each
    residual block, ``out`` for the output (the weights file stores them as ``w{i}``/``b{i}`` in this order)."""
    names = [f"lin{k}" for k in range(len(hidden))]
    for k in range(res_blocks):
        names += [f"res{k}a", f"res{k}b"]
    return names + ["out"]


class ValueNet:
    """The cost-to-go network in NumPy (float32): ``net(states) -> (B,)`` estimated quarter turns to solved."""

    def __init__(self, hidden: tuple[int, ...], res_blocks: int, weights: list[np.ndarray], biases: list[np.ndarray],
                 meta: dict[str, Any] | None = None) -> None:
        if not hidden:
            raise ValueError("a value network has at least one hidden layer")
        expected = len(layer_names(hidden, res_blocks))
        if len(weights) != expected or len(biases) != expected:
            raise ValueError(f"a network of hidden {hidden} and {res_blocks} residual blocks has {expected} linear "
                             f"layers, got {len(weights)} weights and {len(biases)} biases")
        self.hidden, self.res_blocks = tuple(int(h) for h in hidden), int(res_blocks)
        self.weights = [np.ascontiguousarray(w.T, dtype=np.float32) for w in weights]  # (in, out): x @ w
        self.biases = [np.asarray(b, dtype=np.float32) for b in biases]
        self.meta = meta or {}
        shapes = [VALUE_INPUTS, *self.hidden] + [self.hidden[-1]] * (2 * self.res_blocks) + [1]
        for k, w in enumerate(self.weights):
            want = (shapes[k] if k <= len(self.hidden) else self.hidden[-1], shapes[k + 1])
            if w.shape != want or self.biases[k].shape != (want[1],):
                raise ValueError(f"linear layer {k} is shaped {w.shape} (bias {self.biases[k].shape}), expected {want}")

    def __call__(self, states: np.ndarray) -> np.ndarray:
        """Estimated distance of each of the (B, 54) states (float32, clipped at 0)."""
        return self.forward(encode(states))

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The network on encoded input (B, 288)."""
        n_plain = len(self.hidden)
        for k in range(n_plain):
            x = np.maximum(x @ self.weights[k] + self.biases[k], 0.0)
        for k in range(self.res_blocks):
            a, b = n_plain + 2 * k, n_plain + 2 * k + 1
            inner = np.maximum(x @ self.weights[a] + self.biases[a], 0.0)
            x = np.maximum(x + inner @ self.weights[b] + self.biases[b], 0.0)
        out = x @ self.weights[-1] + self.biases[-1]
        return np.maximum(out[:, 0], 0.0)

    @property
    def parameters(self) -> int:
        return int(sum(w.size + b.size for w, b in zip(self.weights, self.biases)))


def load_value_net(path: str | Path | None = None) -> ValueNet:
    """The network in a weights file (default: the shipped one); a missing or malformed file is a ``ValueError``."""
    path = Path(path) if path is not None else DEEPCUBE_WEIGHTS
    if not path.is_file():
        raise ValueError(f"no value network at {path} (train one: python -m cubebench.training.deepcube --out DIR)")
    try:
        with np.load(path, allow_pickle=False) as data:
            hidden = tuple(int(h) for h in data["hidden"])
            res_blocks = int(data["res_blocks"])
            n = len(layer_names(hidden, res_blocks))
            weights = [data[f"w{k}"] for k in range(n)]
            biases = [data[f"b{k}"] for k in range(n)]
            meta = json.loads(str(data["meta"])) if "meta" in data else {}
    except (KeyError, OSError, ValueError) as err:
        raise ValueError(f"{path} is not a value network's weights file: {err}") from None
    return ValueNet(hidden, res_blocks, weights, biases, meta)


def save_value_net(path: Path, hidden: tuple[int, ...], res_blocks: int, weights: list[np.ndarray],
                   biases: list[np.ndarray], meta: dict[str, Any]) -> None:
    """Write a weights file whole or not at all (a file beside, then renamed into place)."""
    arrays: dict[str, Any] = {"hidden": np.asarray(hidden, np.int64), "res_blocks": np.asarray(res_blocks, np.int64),
                              "meta": np.asarray(json.dumps(meta))}
    for k, (w, b) in enumerate(zip(weights, biases)):
        arrays[f"w{k}"] = np.asarray(w, np.float32)
        arrays[f"b{k}"] = np.asarray(b, np.float32)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)
