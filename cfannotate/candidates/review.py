"""The researcher's review of candidates: accept, reject, edit (one or many), promote to gold.

Review may go on while workers label. The rule that keeps their work safe: nothing a
worker was given changes. A candidate in a unit that a worker claimed cannot be
rejected, edited or promoted; accepting one never adds it to a claimed unit. Units are
placed and emptied by labeling, which answers through `candidates.hooks.review`; gold
rounds are made in `cfannotate.labeling.promotion`. This module only decides what may
happen.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.services import MAX_TEXT_CHARS
from cfannotate.candidates import adapter, hooks
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput, NotFound
from cfannotate.core.text import counted

REVIEW_ACTIONS = ("accept", "reject")
MAX_BULK = 500


def candidate_get(*, campaign: Campaign, candidate_id: object) -> Candidate:
    """A candidate of the campaign; NotFound for any other id (or a non-number)."""
    found = (
        Candidate.objects.filter(campaign=campaign, pk=candidate_id).select_related("original")
        if isinstance(candidate_id, int) and not isinstance(candidate_id, bool)
        else Candidate.objects.none()
    )
    candidate = found.first()
    if candidate is None:
        raise NotFound(f"No candidate {candidate_id!r} in this campaign.")
    return candidate


def _locked(candidate: Candidate) -> Candidate:
    return Candidate.objects.select_for_update().select_related("original").get(pk=candidate.pk)


def _raise_if_judged(candidate: Candidate, doing: str) -> None:
    judged = candidate.judgments.count()
    if judged:
        raise Conflict(
            f"Workers already judged this candidate ({counted(judged, 'judgment')}); it cannot be "
            f"{doing} now."
        )


def _raise_if_given(candidate: Candidate, doing: str) -> None:
    """Refuse a change to a candidate a worker was given (its unit claimed, or judged)."""
    _raise_if_judged(candidate, doing)
    hooks.review.raise_if_given(candidate, doing)


def _raise_if_gold(candidate: Candidate, doing: str) -> None:
    if candidate.status == CandidateStatus.GOLD:
        raise Conflict(
            f"This candidate is an item of a gold round; it cannot be {doing}. Deactivate the "
            "round on the gold page instead."
        )


@transaction.atomic
def candidate_accept(*, candidate: Candidate) -> Candidate:
    """Select a generated, filtered or rejected candidate for labeling.

    It joins an unclaimed unit of its original with room, or a new unit. Accepting a
    candidate that is already in a unit changes nothing. An original without units
    gets one with just this candidate; automatic selection skips originals that have
    units, so accept before selection only for originals you curate by hand.
    """
    candidate = _locked(candidate)
    _raise_if_gold(candidate, "accepted for real rounds")
    if hooks.review.in_unit(candidate):
        return candidate
    hooks.review.raise_if_gold_original(candidate)
    hooks.review.place(candidate)
    candidate.status = CandidateStatus.SELECTED
    candidate.save(update_fields=["status"])
    return candidate


@transaction.atomic
def candidate_reject(*, candidate: Candidate) -> Candidate:
    """Keep a candidate out of labeling: out of its unit (unless a worker has it), rejected."""
    candidate = _locked(candidate)
    _raise_if_gold(candidate, "rejected")
    _raise_if_given(candidate, "rejected")
    hooks.review.remove(candidate)
    candidate.status = CandidateStatus.REJECTED
    candidate.save(update_fields=["status"])
    return candidate


def _text_checked(candidate: Candidate, text: object) -> str:
    from generation.postprocess import normalized_text

    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("Type the new counterfactual.", fields={"text": ["Empty."]})
    text = text.strip()
    problem = None
    if "\x00" in text:
        problem = "Contains a NUL character (byte 0)."
    elif len(text) > MAX_TEXT_CHARS:
        problem = f"{len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}."
    elif normalized_text(text) == normalized_text(candidate.text):
        problem = "Unchanged; edit the text or cancel."
    elif normalized_text(text) == normalized_text(candidate.original.text):
        problem = "The same as the original; a counterfactual must differ."
    else:
        others = candidate.original.candidates.exclude(pk=candidate.pk).values_list("text", "pk")
        twin = next(
            (pk for other, pk in others if normalized_text(other) == normalized_text(text)), None
        )
        if twin is not None:
            problem = f"Already a candidate of this original (#{twin})."
    if problem:
        raise InvalidInput(f"The text was not saved: {problem}", fields={"text": [problem]})
    return text


@transaction.atomic
def candidate_edit(*, candidate: Candidate, text: object) -> Candidate:
    """Replace a candidate's text and annotate it as an imported candidate is annotated.

    Edit ops, control code and relationship r(x̂) are recomputed by the same
    post-processing; fluency is not rescored (that loads a language model), so it
    becomes unknown, and a candidate the fluency filter had dropped is kept again.
    Refused for a candidate a worker was given, and for a gold item workers had.
    """
    from generation.parsing import ParseCache
    from generation.postprocess import annotate
    from generation.records import CandidateRecord

    candidate = _locked(candidate)
    _raise_if_given(candidate, "edited")
    text = _text_checked(candidate, text)
    record = CandidateRecord(
        original_key=str(candidate.original_id),
        text=text,
        generator=candidate.generator,
        intended_label=candidate.intended_label.value if candidate.intended_label else None,
    )
    original = adapter.original_record(candidate.original)
    annotated = annotate([record], {record.original_key: original}, parses=ParseCache())
    result = annotated.candidates[0]
    history = list(candidate.metadata.get("edited_from", []))
    candidate.metadata = {**candidate.metadata, "edited_from": [*history, candidate.text]}
    candidate.text = text
    candidate.control_code = result.code
    candidate.edit = {**result.edit, "relationship": result.relationship.to_dict()}
    candidate.fluency_full = candidate.fluency_changed = None
    candidate.metadata["dropped_by"] = None
    if candidate.status == CandidateStatus.FILTERED:
        candidate.status = CandidateStatus.GENERATED
    candidate.save()
    return candidate


@dataclass(frozen=True)
class ReviewSummary:
    accepted: int
    rejected: int


def _ids_checked(name: str, ids: object) -> list[int]:
    if ids is None:
        return []
    if not isinstance(ids, Sequence) or isinstance(ids, str):
        raise InvalidInput(f"{name} is a list of candidate ids.", fields={name: ["Not a list."]})
    bad = [value for value in ids if not isinstance(value, int) or isinstance(value, bool)]
    if bad:
        raise InvalidInput(
            f"{name} is a list of candidate ids.", fields={name: [f"Not an id: {bad[0]!r}."]}
        )
    return list(ids)


@transaction.atomic
def candidates_review(
    *, campaign: Campaign, accept: Sequence[int] = (), reject: Sequence[int] = ()
) -> ReviewSummary:
    """Accept and reject many candidates at once: all of them or none.

    Every refused id is reported under `accept.<id>` or `reject.<id>`, with the reason
    `candidate_accept` or `candidate_reject` gives.
    """
    accept, reject = _ids_checked("accept", accept), _ids_checked("reject", reject)
    if not accept and not reject:
        raise InvalidInput("Choose candidates to accept or reject.", fields={"accept": ["Empty."]})
    if len(accept) + len(reject) > MAX_BULK:
        raise InvalidInput(
            f"At most {MAX_BULK} candidates at once.", fields={"accept": ["Too many."]}
        )
    errors: dict[str, list[str]] = {}
    both = set(accept) & set(reject)
    for candidate_id in sorted(both):
        errors[f"reject.{candidate_id}"] = ["Both accepted and rejected; choose one."]
    for action, ids, service in (
        ("accept", accept, candidate_accept),
        ("reject", reject, candidate_reject),
    ):
        for candidate_id in dict.fromkeys(ids):
            if candidate_id in both:
                continue
            try:
                with transaction.atomic():
                    service(candidate=candidate_get(campaign=campaign, candidate_id=candidate_id))
            except CfannotateError as error:
                errors.setdefault(f"{action}.{candidate_id}", []).append(error.message)
    if errors:
        raise InvalidInput(
            f"{counted(len(errors), 'candidate')} cannot be changed; nothing was changed.",
            fields=errors,
        )
    return ReviewSummary(accepted=len(set(accept)), rejected=len(set(reject)))
