"""What candidates tells the app above it that puts candidates in front of workers (labeling).

candidates never imports labeling. labeling connects here in `LabelingConfig.ready()`:

- `candidates_ready` (signal, `campaign_id`, `wait`): a generation run finished or an
  import was stored. labeling selects the diverse candidates into labeling units: queued
  once the transaction commits, or at once with `wait=True` (the command line), returning
  how many units were made.
- `review`: the `LabelingSide` the researcher's review asks before and after changing a
  candidate, so that nothing a worker was given changes (`candidates/review.py`).
- `label_sources`: where candidates' known labels come from, most trusted first (labeling:
  gold answers; quality: the crowd's kept labels), for the classifier in the loop
  (`candidates/predictions.py`). Each source gives, per candidate it judged,
  `(candidate id, text, label, context)`, the label None where it judged the candidate not
  a valid counterfactual.
"""

from collections.abc import Callable, Iterable
from typing import Protocol

from django.dispatch import Signal

from cfannotate.candidates.models import Candidate

candidates_ready = Signal()


def candidates_ready_send(campaign_id: int, *, wait: bool = False) -> int | None:
    """Tell labeling the campaign's candidates are in; with `wait`, how many units it made."""
    answers = candidates_ready.send(sender=Candidate, campaign_id=campaign_id, wait=wait)
    made = [answer for _, answer in answers if isinstance(answer, int)]
    return sum(made) if made else None


class LabelingSide(Protocol):
    """labeling's answers to the review of one candidate."""

    def in_unit(self, candidate: Candidate) -> bool:
        """Whether the candidate sits in a labeling unit."""

    def raise_if_given(self, candidate: Candidate, doing: str) -> None:
        """Conflict if a worker was given the candidate's unit, or its gold round."""

    def raise_if_gold_original(self, candidate: Candidate) -> None:
        """Conflict if the candidate's original has a gold round (never in real rounds)."""

    def place(self, candidate: Candidate) -> None:
        """Put the candidate in an unclaimed unit of its original, or a new one."""

    def remove(self, candidate: Candidate) -> None:
        """Take the candidate out of its unit."""


class _Unwired:
    def __getattr__(self, name):
        raise RuntimeError("No app answers candidates.hooks.review: is labeling installed?")


review: LabelingSide = _Unwired()


def wire_review(side: LabelingSide) -> None:
    global review
    review = side


# (candidate id, text, label value or None when judged invalid, the original's context)
LabeledCandidate = tuple[int, str, str | None, str]
label_sources: list[tuple[int, Callable[..., Iterable[LabeledCandidate]]]] = []


def label_source_add(rank: int, source: Callable[..., Iterable[LabeledCandidate]]) -> None:
    """Add `source(campaign)`; a lower rank is more trusted. Adding it again changes nothing."""
    if (rank, source) not in label_sources:
        label_sources.append((rank, source))
        label_sources.sort(key=lambda entry: entry[0])
