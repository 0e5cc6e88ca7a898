"""The label a counterfactual keeps from its qualified workers' votes (Polyjuice C.2).

C.2 keeps a counterfactual "that at least one annotator deemed valid/fluent, and [on
which] both annotators agreed on a particular class label". Generalized for K votes:
kept when at least one qualified vote *for the winning label* says valid, at least K
qualified votes name the winning label, and the winning label's share of the qualified
votes reaches the agreement threshold. With K = 2 and any threshold above one half this
is C.2 exactly (both must agree, so the valid vote is one of theirs); after a re-queue a
third vote can settle a 1:1 split when the threshold allows two of three, but a label
that only annotators who called x̂ invalid gave is not kept on a dissenter's "valid".
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Vote:
    is_valid: bool
    label: str


@dataclass(frozen=True)
class VoteOutcome:
    label: str | None  # the winning label; None on a tie or without votes
    is_valid: bool
    kept: bool
    agreement: float  # winning label's share of the votes (0 without votes)
    votes: int
    needs_more: bool  # fewer than K votes, or a valid counterfactual without agreement


def vote_outcome(votes: Sequence[Vote], *, k: int, agreement_threshold: float) -> VoteOutcome:
    if not votes:
        return VoteOutcome(
            label=None, is_valid=False, kept=False, agreement=0.0, votes=0, needs_more=k > 0
        )
    counts = Counter(vote.label for vote in votes).most_common()
    top_label, top_count = counts[0]
    tied = len(counts) > 1 and counts[1][1] == top_count
    label = None if tied else top_label
    agreement = top_count / len(votes)
    is_valid = any(vote.is_valid for vote in votes)
    backed = any(vote.is_valid and vote.label == top_label for vote in votes)
    kept = (
        label is not None and backed and top_count >= k and agreement >= agreement_threshold - 1e-9
    )
    # All-invalid votes are a settled "discard"; more votes cannot make it kept.
    needs_more = len(votes) < k or (is_valid and not kept)
    return VoteOutcome(
        label=label,
        is_valid=is_valid,
        kept=kept,
        agreement=agreement,
        votes=len(votes),
        needs_more=needs_more,
    )
