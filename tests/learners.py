"""Learned shortcut models for the no-free-points tests (numpy only): what a model that reads part of a prompt could
learn from many items without doing the task.

A test turns what such a model reads (the text grid of a verification item, the turn words of a perturbed STARE
item) into named features, fits a learner on items of one seed and scores it on fresh items of another: held-out
accuracy within chance's interval means the part read gives the answer away to neither learner.

* :func:`logistic_regression`: L2-regularised logistic regression on one-hot and count features, fitted by
  Newton's method;
* :func:`boosted_stumps`: AdaBoost over one-feature threshold rules (it finds the combinations of counts a hand-made
  rule would, and weights them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from cubebench.tasks.metrics import Proportion

Features = Mapping[str, float]
Learner = Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]
"""Fits on (X, y in {0, 1}) and returns a predictor of 0/1 labels."""


class Vocabulary:
    """The feature names seen in training, in a fixed order; features unseen in training are dropped."""

    def __init__(self, rows: Iterable[Features]) -> None:
        self.names = sorted({name for row in rows for name in row})
        self.index = {name: k for k, name in enumerate(self.names)}

    def matrix(self, rows: Sequence[Features]) -> np.ndarray:
        out = np.zeros((len(rows), len(self.names)))
        for r, row in enumerate(rows):
            for name, value in row.items():
                if name in self.index:
                    out[r, self.index[name]] = value
        return out


def logistic_regression(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 25) -> Callable[[np.ndarray],
                                                                                                   np.ndarray]:
    """L2-regularised logistic regression (with an intercept), Newton's method on standardised features."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0

    def design(data: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((len(data), 1)), (data - mean) / scale])

    a = design(x)
    w = np.zeros(a.shape[1])
    penalty = np.full(a.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-a @ w))
        gradient = a.T @ (p - y) + penalty * w
        hessian = (a * (p * (1 - p))[:, None]).T @ a + np.diag(penalty) + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hessian, gradient)
    return lambda data: (design(data) @ w > 0).astype(int)


def boosted_stumps(x: np.ndarray, y: np.ndarray, rounds: int = 60) -> Callable[[np.ndarray], np.ndarray]:
    """AdaBoost over stumps "feature >= t" (either way), ``rounds`` rounds."""
    n = len(y)
    sign = 2 * y - 1
    weight = np.full(n, 1 / n)
    cuts = [np.unique(x[:, j]) for j in range(x.shape[1])]
    model: list[tuple[int, float, int, float]] = []
    for _ in range(rounds):
        best = (0.5, 0, 0.0, 1)
        for j, values in enumerate(cuts):
            for t in values[1:]:
                fires = x[:, j] >= t
                err = weight[fires != (sign > 0)].sum()  # the stump "Yes when it fires"
                for e, direction in ((err, 1), (1 - err, -1)):
                    if e < best[0]:
                        best = (e, j, float(t), direction)
        err, j, t, direction = best
        if err >= 0.5 - 1e-12:
            break
        err = max(err, 1e-12)
        alpha = 0.5 * np.log((1 - err) / err)
        vote = direction * np.where(x[:, j] >= t, 1, -1)
        weight *= np.exp(-alpha * sign * vote)
        weight /= weight.sum()
        model.append((j, t, direction, alpha))

    def predict(data: np.ndarray) -> np.ndarray:
        score = np.zeros(len(data))
        for j, t, direction, alpha in model:
            score += alpha * direction * np.where(data[:, j] >= t, 1, -1)
        return (score > 0).astype(int)
    return predict


LEARNERS: dict[str, Learner] = {"logistic regression": logistic_regression, "boosted stumps": boosted_stumps}


def held_out(train: Sequence[tuple[Features, bool]], test: Sequence[tuple[Features, bool]],
             learner: Learner) -> Proportion:
    """Right answers of ``learner`` fitted on ``train`` and scored on ``test`` (rows of (features, is Yes))."""
    vocabulary = Vocabulary(f for f, _ in train)
    predict = learner(vocabulary.matrix([f for f, _ in train]), np.array([int(y) for _, y in train]))
    guesses = predict(vocabulary.matrix([f for f, _ in test]))
    return Proportion(int(sum(int(g) == int(y) for g, (_, y) in zip(guesses, test))), len(test))


def covers(rate: Proportion, chance: float) -> bool:
    """Whether ``rate``'s Wilson 95 % interval holds ``chance``."""
    lo, hi = rate.interval or (0.0, 1.0)
    return lo <= chance <= hi
