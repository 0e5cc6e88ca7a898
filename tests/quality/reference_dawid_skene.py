"""Dawid-Skene (1979): each item's true class estimated jointly with each worker's confusion.

Expectation-maximization over the observed (item, worker, class) triples, started from
the vote shares of each item. Reported beside the majority vote when a campaign
collects more than two judgments per counterfactual, where per-worker reliability can
be told apart from the item's difficulty. Plain numpy; no database.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SMOOTHING = 0.01  # added to every confusion cell so one slip is not "never"


@dataclass(frozen=True)
class DawidSkeneResult:
    posteriors: np.ndarray  # (items, classes): P(true class | all judgments)
    confusion: np.ndarray  # (workers, classes, classes): P(answer | true class)
    priors: np.ndarray  # (classes,)
    iterations: int

    def labels(self) -> np.ndarray:
        return self.posteriors.argmax(axis=1)

    def confidence(self) -> np.ndarray:
        return self.posteriors.max(axis=1)


def dawid_skene(
    judgments: Sequence[tuple[int, int, int]],
    *,
    items: int,
    workers: int,
    classes: int,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
) -> DawidSkeneResult:
    """Judgments are (item, worker, class) index triples; every item needs at least one."""
    triples = np.asarray(judgments, dtype=np.int64).reshape(-1, 3)
    item, worker, answer = triples[:, 0], triples[:, 1], triples[:, 2]
    one_hot = np.zeros((len(triples), classes))
    one_hot[np.arange(len(triples)), answer] = 1.0

    # Start from each item's vote shares.
    posteriors = np.zeros((items, classes))
    np.add.at(posteriors, item, one_hot)
    posteriors /= np.maximum(posteriors.sum(axis=1, keepdims=True), 1e-12)

    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        # M-step: priors and each worker's confusion matrix from the current posteriors.
        priors = posteriors.mean(axis=0) + 1e-12
        confusion = np.full((workers, classes, classes), SMOOTHING)
        # confusion[w, true, answered] += posterior of `true` for each of w's judgments
        np.add.at(confusion, (worker, slice(None), answer), posteriors[item])
        confusion /= confusion.sum(axis=2, keepdims=True)

        # E-step: log P(true class) + sum of log P(answer | true class) over judgments.
        log_likelihood = np.zeros((items, classes)) + np.log(priors)
        np.add.at(log_likelihood, item, np.log(confusion[worker, :, answer]))
        log_likelihood -= log_likelihood.max(axis=1, keepdims=True)
        updated = np.exp(log_likelihood)
        updated /= updated.sum(axis=1, keepdims=True)
        change = np.abs(updated - posteriors).max()
        posteriors = updated
        if change < tolerance:
            break
    return DawidSkeneResult(
        posteriors=posteriors, confusion=confusion, priors=priors, iterations=iterations
    )
