"""The researcher's review of candidates: accept, reject, edit (one or many), promote to gold.

Review may go on while workers label. The rule that keeps their work safe: nothing a
worker was given changes. A candidate in a unit that a worker claimed cannot be
rejected, edited or promoted; accepting one never adds it to a claimed unit. Units are
placed and emptied by `cfannotate.labeling.units`, gold rounds made by
`cfannotate.labeling.gold`; this module only decides what may happen.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db import transaction

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.campaigns.services import MAX_TEXT_CHARS, label_lookup
from cfannotate.candidates import adapter
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput, NotFound
from cfannotate.labeling import gold, units
from cfannotate.labeling.models import GoldKind, GoldRound, LabelingUnit

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


def _unit_of(candidate: Candidate) -> LabelingUnit | None:
    return LabelingUnit.objects.filter(items__candidate=candidate).first()


def _raise_if_judged(candidate: Candidate, doing: str) -> None:
    judged = candidate.judgments.count()
    if judged:
        raise Conflict(
            f"Workers already judged this candidate ({judged} judgment(s)); it cannot be "
            f"{doing} now."
        )


def _raise_if_given(candidate: Candidate, doing: str) -> None:
    """Refuse a change to a candidate a worker was given (its unit claimed, or judged)."""
    _raise_if_judged(candidate, doing)
    unit = _unit_of(candidate)
    if unit is not None and not units.units_lock_unclaimed(LabelingUnit.objects.filter(pk=unit.pk)):
        raise Conflict(
            f"A worker was already given this candidate's labeling unit; it cannot be {doing} now."
        )


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
    if _unit_of(candidate) is not None:
        return candidate
    if GoldRound.objects.filter(original_id=candidate.original_id).exists():
        raise Conflict(
            "This candidate's original has a gold round; its candidates are never shown in "
            "real rounds, so that the gold round cannot be recognised."
        )
    units.units_place_candidates(campaign=candidate.campaign, candidates=[candidate])
    candidate.status = CandidateStatus.SELECTED
    candidate.save(update_fields=["status"])
    return candidate


@transaction.atomic
def candidate_reject(*, candidate: Candidate) -> Candidate:
    """Keep a candidate out of labeling: out of its unit (unless a worker has it), rejected."""
    candidate = _locked(candidate)
    _raise_if_gold(candidate, "rejected")
    _raise_if_given(candidate, "rejected")
    units.units_remove_candidates(candidates=[candidate])
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
    if candidate.status == CandidateStatus.GOLD:
        gold.gold_round_raise_if_given(candidate.gold_item.gold_round)
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
            f"{len(errors)} candidate(s) cannot be changed; nothing was changed.", fields=errors
        )
    return ReviewSummary(accepted=len(set(accept)), rejected=len(set(reject)))


def _promoted_items_checked(
    campaign: Campaign, original: Original, items: list
) -> tuple[list[tuple[Candidate, gold.GoldAnswer]], gold.Problems]:
    lookup = label_lookup(campaign)
    mine = {candidate.pk: candidate for candidate in original.candidates.all()}
    entries, problems, seen = [], [], set()
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        if not isinstance(item, Mapping):
            problems.append((where, "Each item is an object with candidate_id, valid and label."))
            continue
        candidate_id = item.get("candidate_id")
        candidate = mine.get(candidate_id) if isinstance(candidate_id, int) else None
        if candidate is None:
            problems.append(
                (f"{where}.candidate_id", f"No candidate {candidate_id!r} of this original.")
            )
        elif candidate.pk in seen:
            problems.append((f"{where}.candidate_id", "Given twice in this round."))
        elif candidate.status == CandidateStatus.GOLD:
            problems.append((f"{where}.candidate_id", "Already an item of a gold round."))
        elif candidate.judgments.exists():
            problems.append((f"{where}.candidate_id", "Workers already judged it."))
        if candidate is not None:
            seen.add(candidate.pk)
        answer, answer_problems = gold.gold_answer_checked(item, lookup, where)
        problems += answer_problems
        if candidate is not None and answer is not None:
            entries.append((candidate, answer))
    return entries, problems


@transaction.atomic
def candidates_promote_to_gold(
    *, campaign: Campaign, original: Original, items: list[Mapping], kind: str = GoldKind.GOLD
) -> GoldRound:
    """Turn candidates of one original into a gold (or training) round with known answers.

    `items`: `[{"candidate_id", "valid", "label", "explanation"}]`. A gold round's original
    stays out of real rounds, so its labeling units are removed first and their other
    candidates go back to generated; if a worker was given any of them, nothing happens.
    """
    if original.campaign_id != campaign.id:
        raise NotFound(f"No original {original.pk} in this campaign.")
    problems = gold.gold_round_shape_checked(kind, items)
    entries = []
    if isinstance(items, list):
        entries, item_problems = _promoted_items_checked(campaign, original, items)
        problems += item_problems
    gold.problems_raise("The gold round was not saved; fix the fields below.", problems)
    original_units = LabelingUnit.objects.filter(campaign=campaign, original=original)
    unclaimed = units.units_lock_unclaimed(original_units)
    if len(unclaimed) != original_units.count():
        raise Conflict(
            "Workers were already given a labeling unit of this original, so its candidates "
            "cannot become gold: workers would recognise the gold round. Choose another "
            "original, or author a gold round on one without units."
        )
    freed = Candidate.objects.filter(unit_item__unit__in=unclaimed)
    freed_ids = list(freed.values_list("pk", flat=True))
    units.units_remove_candidates(candidates=list(freed))
    Candidate.objects.filter(pk__in=freed_ids).update(status=CandidateStatus.GENERATED)
    return gold.gold_round_create(
        campaign=campaign, original=original, kind=str(kind).strip().lower(), entries=entries
    )
