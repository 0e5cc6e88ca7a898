"""Gold and training rounds: counterfactuals with known answers, written by the researcher.

Hidden gold rounds are mixed into every assignment and score workers (Appendix C.2);
training rounds open an assignment and show the expected answers afterwards. Both are
rounds on an original of the campaign that is kept out of the real units, so nothing
about a gold round's original gives it away: an original in units no worker was given
yet is taken out of them when a round is made on it (`units.original_units_withdraw`).

A round is made three ways, all through `gold_round_create`: imported from a file
(`gold_rounds_import`; uploaded on the gold page or the API, `gold_rounds_upload`, or read
by `manage.py import_gold`), typed on the gold page (`gold_round_author`), or promoted from
candidates the generators made (`cfannotate.labeling.promotion.candidates_promote_to_gold`).
Its answers can change until a worker is given it; after that only (de)activation.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import transaction

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.campaigns.services import MAX_TEXT_CHARS, label_lookup
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.core import tabular
from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.core.row_report import RowError, row_errors_raise
from cfannotate.core.text import counted
from cfannotate.labeling.models import GoldItem, GoldKind, GoldRound, LabelingUnit, Round
from cfannotate.labeling.units import (
    ORIGINAL_GIVEN_OUT,
    original_units_withdraw,
    originals_given_out,
)

GOLD_GENERATOR = "gold"
MAX_ITEMS = 10
# An uploaded file of rounds: each line one round of a few counterfactuals, so far
# smaller than a dataset of originals; it is imported inside the request.
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
MAX_UPLOAD_ROWS = 5_000
VALID_SPELLINGS = {True: True, False: False, "valid": True, "invalid": False, "true": True}
VALID_SPELLINGS.update({"false": False, "1": True, "0": False, "yes": True, "no": False})
IN_UNITS = (
    "This original is already in labeling units; gold rounds need originals "
    "workers do not also see in real rounds."
)

Problems = list[tuple[str, str]]  # (field, message)


@dataclass(frozen=True)
class GoldAnswer:
    """The expected answers of one gold item."""

    valid: bool
    label: CampaignLabel
    explanation: str


def _valid(value) -> bool | None:
    key = value.strip().lower() if isinstance(value, str) else value
    return VALID_SPELLINGS.get(key) if isinstance(key, str | bool) else None


def gold_answer_checked(
    item: Mapping, lookup: dict[str, CampaignLabel], where: str
) -> tuple[GoldAnswer | None, Problems]:
    """The answer an item gives (`valid`, `label`, optional `explanation`), or its problems."""
    problems: Problems = []
    valid = _valid(item.get("valid", True))
    if item.get("valid") == "":
        problems.append((f"{where}.valid", "Choose whether a careful worker finds it valid."))
    elif valid is None:
        problems.append((f"{where}.valid", "Use true or false."))
    label = lookup.get(str(item.get("label") or "").strip().lower())
    if item.get("label") in (None, ""):
        problems.append((f"{where}.label", "Choose the label a careful worker gives."))
    elif label is None:
        labels = ", ".join(sorted({label.value for label in lookup.values()}))
        problems.append(
            (f"{where}.label", f"Unknown label {item.get('label')!r}; expected one of {labels}.")
        )
    explanation = item.get("explanation")
    explanation = "" if explanation is None else str(explanation).strip()
    if len(explanation) > MAX_TEXT_CHARS:
        problems.append((f"{where}.explanation", f"Longer than {MAX_TEXT_CHARS} characters."))
    if problems:
        return None, problems
    return GoldAnswer(valid=valid, label=label, explanation=explanation), []


def gold_round_most_items(campaign: Campaign, kind: object) -> int:
    """How many counterfactuals a round of this kind may hold. A hidden gold round holds no
    more than a labeling unit (the campaign's candidates selected per original): a longer
    round would tell a worker who counts that it is gold. Training rounds say what they are."""
    if str(kind or "").strip().lower() == GoldKind.GOLD:
        return min(campaign.selected_per_original, MAX_ITEMS)
    return MAX_ITEMS


def gold_round_shape_checked(campaign: Campaign, kind: object, items: object) -> Problems:
    """The kind and the number of items of a round."""
    problems: Problems = []
    if str(kind or "").strip().lower() not in GoldKind.values:
        problems.append(("kind", "Use gold or training."))
    most = gold_round_most_items(campaign, kind)
    if not isinstance(items, list) or not items:
        problems.append(("items", f"Give 1 to {most} items."))
    elif len(items) > most and most < MAX_ITEMS:
        problems.append(
            (
                "items",
                f"A hidden gold round holds at most {most} counterfactuals here, as many as a "
                f"labeling unit shows ({most} selected per original, in Settings); "
                f"this one has {len(items)}, and a longer round tells workers it is gold.",
            )
        )
    elif len(items) > most:
        problems.append(("items", f"Give 1 to {most} items."))
    return problems


def _authored_items_checked(
    items: list, lookup: dict[str, CampaignLabel], original: Original | None
) -> tuple[list[tuple[str, GoldAnswer]], Problems]:
    """(text, answer) of typed items, or the problems of every item."""
    checked, problems, seen = [], [], set()
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        if not isinstance(item, Mapping):
            problems.append((where, "Each item is an object with text, valid and label."))
            continue
        given = item.get("text")
        text = given.strip() if isinstance(given, str) else ""
        problem = _item_text_problem(given, text, original, seen)
        if problem:
            problems.append((f"{where}.text", problem))
        seen.add(text)
        answer, answer_problems = gold_answer_checked(item, lookup, where)
        problems += answer_problems
        if answer is not None:
            checked.append((text, answer))
    return checked, problems


def _item_text_problem(
    given: object, text: str, original: Original | None, seen: set[str]
) -> str | None:
    """What is wrong with an item's text (`given`, and `text` stripped), or None."""
    if given is not None and not isinstance(given, str):
        return "Give the text as a string in quotes, not a list, an object, a number or true/false."
    if not text:
        return "The text is empty."
    if len(text) > MAX_TEXT_CHARS:
        return f"Longer than {MAX_TEXT_CHARS} characters."
    if original is not None and text == original.text:
        return "The same as the original."
    if text in seen:
        return "Given twice in this round."
    return None


def _original_in_units(original: Original) -> bool:
    return LabelingUnit.objects.filter(original=original).exists()


def _authored_candidates(
    campaign: Campaign, original: Original, items: list[tuple[str, GoldAnswer]]
) -> list[tuple[Candidate, GoldAnswer]]:
    """The gold candidates of typed texts: new rows, or a free candidate with the same text."""
    entries = []
    for text, answer in items:
        candidate, _ = Candidate.objects.update_or_create(
            original=original,
            text=text,
            defaults={
                "campaign": campaign,
                "source": CandidateSource.AUTHORED,
                "generator": GOLD_GENERATOR,
                "status": CandidateStatus.GOLD,
            },
        )
        if hasattr(candidate, "gold_item") or hasattr(candidate, "unit_item"):
            raise InvalidInput(
                f"{text!r} is already used by another round; each gold item is used once.",
                fields={"items": ["Used twice."]},
            )
        entries.append((candidate, answer))
    return entries


def gold_round_create(
    *,
    campaign: Campaign,
    original: Original,
    kind: str,
    entries: list[tuple[Candidate, GoldAnswer]],
) -> GoldRound:
    """A round of checked (candidate, answer) entries; the candidates become gold.

    Must run inside a transaction; callers have checked the original and the answers.
    """
    gold_round = GoldRound.objects.create(campaign=campaign, original=original, kind=kind)
    GoldItem.objects.bulk_create(
        GoldItem(
            gold_round=gold_round,
            candidate=candidate,
            position=position,
            expected_valid=answer.valid,
            expected_label=answer.label,
            explanation=answer.explanation,
        )
        for position, (candidate, answer) in enumerate(entries, start=1)
    )
    Candidate.objects.filter(pk__in=[candidate.pk for candidate, _ in entries]).update(
        status=CandidateStatus.GOLD
    )
    return gold_round


@transaction.atomic
def gold_rounds_import(*, campaign: Campaign, records: Iterable[Mapping[str, object]]) -> int:
    """Create gold or training rounds from records; all of them or none. An original in
    labeling units no worker was given yet is taken out of them; one a worker was given
    is refused (its row's error).

    A record: `{"original_id": "s01", "kind": "gold" | "training", "items": [{"text":
    ..., "valid": true, "label": "negative", "explanation": "..."}]}`.
    """
    lookup = label_lookup(campaign)
    originals = {original.external_id: original for original in campaign.originals.all()}
    given_out = originals_given_out(campaign.originals.all())
    errors: list[RowError] = []
    plans = []
    first_rows: dict[tuple[int, str], int] = {}
    for row, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            errors.append(RowError(row, "record", "Each row is an object."))
            continue
        problems: Problems = []
        original = originals.get(str(record.get("original_id") or "").strip())
        kind = str(record.get("kind") or GoldKind.GOLD).strip().lower()
        items = record.get("items")
        if original is None:
            problems.append(("original_id", f"No original {record.get('original_id')!r}."))
        elif original.id in given_out:
            problems.append(("original_id", ORIGINAL_GIVEN_OUT))
        shape = gold_round_shape_checked(campaign, kind, items)
        problems += shape
        checked = []
        if not any(field == "items" for field, _ in shape):
            checked, item_problems = _authored_items_checked(items, lookup, original)
            problems += item_problems
        if not problems:
            problems += _items_repeated(original, items, row, first_rows)
        errors += [RowError(row, field, message) for field, message in problems]
        if not problems:
            plans.append((original, kind, checked))
    row_errors_raise(errors)
    if not plans:
        raise InvalidInput("The file has no gold rounds; nothing was imported.")

    for original, kind, checked in plans:
        original_units_withdraw(campaign=campaign, original=original)
        entries = _authored_candidates(campaign, original, checked)
        gold_round_create(campaign=campaign, original=original, kind=kind, entries=entries)
    return len(plans)


def _items_repeated(
    original: Original, items: list, row: int, first_rows: dict[tuple[int, str], int]
) -> Problems:
    """Checked items whose text an earlier row gave the same original: one counterfactual,
    which can be in one round only. Remembers this row's texts for the rows after it."""
    problems: Problems = []
    for number, item in enumerate(items, start=1):
        key = (original.pk, item["text"].strip())
        if key in first_rows:
            problems.append(
                (
                    f"items[{number}].text",
                    f"The same text as row {first_rows[key]} for the same original; "
                    "each counterfactual can be in one round only.",
                )
            )
        else:
            first_rows[key] = row
    return problems


def gold_rounds_upload(*, campaign: Campaign, file_name: str, content: bytes) -> int:
    """Rounds from an uploaded JSONL file, one round a line in `gold_rounds_import`'s format;
    all of them or none. Returns how many were made."""
    records = tabular.jsonl_objects(
        file_name=file_name, content=content, max_bytes=MAX_UPLOAD_BYTES, max_rows=MAX_UPLOAD_ROWS
    )
    return gold_rounds_import(campaign=campaign, records=records)


def problems_raise(message: str, problems: Problems) -> None:
    """One InvalidInput with every problem under its field, or nothing when there are none."""
    if not problems:
        return
    fields: dict[str, list[str]] = {}
    for field, problem in problems:
        fields.setdefault(field, []).append(problem)
    raise InvalidInput(message, fields=fields)


@transaction.atomic
def gold_round_author(
    *, campaign: Campaign, original: Original, kind: str, items: list[Mapping]
) -> GoldRound:
    """A round of counterfactuals the researcher types: `[{text, valid, label, explanation}]`.

    The same rules as an imported round: an original of this campaign that no worker was
    given a labeling unit of (it is taken out of its units), 1 to `gold_round_most_items`
    distinct texts that differ from the original.
    """
    if original.campaign_id != campaign.id:
        raise InvalidInput(
            "Choose an original of this campaign.", fields={"original": ["Unknown."]}
        )
    problems: Problems = []
    if originals_given_out([original]):
        problems.append(("original", ORIGINAL_GIVEN_OUT))
    problems += gold_round_shape_checked(campaign, kind, items)
    checked = []
    if isinstance(items, list):
        checked, item_problems = _authored_items_checked(items, label_lookup(campaign), original)
        problems += item_problems
    problems_raise("The gold round was not saved; fix the fields below.", problems)
    original_units_withdraw(campaign=campaign, original=original)
    entries = _authored_candidates(campaign, original, checked)
    return gold_round_create(
        campaign=campaign, original=original, kind=str(kind).strip().lower(), entries=entries
    )


def gold_round_times_given(gold_round: GoldRound) -> int:
    """How many rounds of assignments show (or showed) this gold round to a worker."""
    return Round.objects.filter(gold_round=gold_round).count()


def gold_round_raise_if_given(gold_round: GoldRound) -> None:
    given = gold_round_times_given(gold_round)
    if given:
        raise Conflict(
            f"Workers were already given this round ({counted(given, 'time')}); its answers can no "
            "longer change, since they scored those workers. Deactivate it and author a new one.",
            fields={"items": ["Already given to workers."]},
        )


@transaction.atomic
def gold_round_activate(*, gold_round: GoldRound) -> GoldRound:
    """Put a round back into the pool new assignments draw from."""
    gold_round = GoldRound.objects.select_for_update().get(pk=gold_round.pk)
    if _original_in_units(gold_round.original):
        raise Conflict(IN_UNITS, fields={"is_active": ["Its original is in labeling units."]})
    gold_round.is_active = True
    gold_round.save(update_fields=["is_active"])
    return gold_round


@transaction.atomic
def gold_round_deactivate(*, gold_round: GoldRound) -> GoldRound:
    """Keep a round out of new assignments; assignments that have it keep it."""
    gold_round = GoldRound.objects.select_for_update().get(pk=gold_round.pk)
    gold_round.is_active = False
    gold_round.save(update_fields=["is_active"])
    return gold_round


@transaction.atomic
def gold_round_update(
    *, gold_round: GoldRound, is_active: bool | None = None, items: list[Mapping] | None = None
) -> GoldRound:
    """Change a round's expected answers (`[{id, valid, label, explanation}]`) and/or whether
    it is active; answers only while no worker was given the round. All or nothing."""
    gold_round = GoldRound.objects.select_for_update().get(pk=gold_round.pk)
    if items is not None:
        gold_round_raise_if_given(gold_round)
        if not isinstance(items, list) or not items:
            raise InvalidInput("Give the items to change.", fields={"items": ["Empty."]})
        lookup = label_lookup(gold_round.campaign)
        by_id = {item.id: item for item in gold_round.items.all()}
        problems: Problems = []
        changes, seen = [], set()
        for number, item in enumerate(items, start=1):
            where = f"items[{number}]"
            if not isinstance(item, Mapping):
                problems.append((where, "Each item is an object with id, valid and label."))
                continue
            gold_item = by_id.get(item.get("id")) if isinstance(item.get("id"), int) else None
            if gold_item is None:
                problems.append((f"{where}.id", f"No item {item.get('id')!r} in this round."))
            elif gold_item.id in seen:
                problems.append((f"{where}.id", "Given twice."))
            else:
                seen.add(gold_item.id)
            answer, answer_problems = gold_answer_checked(item, lookup, where)
            problems += answer_problems
            if gold_item is not None and answer is not None:
                changes.append((gold_item, answer))
        problems_raise("The answers were not changed; fix the fields below.", problems)
        for gold_item, answer in changes:
            gold_item.expected_valid = answer.valid
            gold_item.expected_label = answer.label
            gold_item.explanation = answer.explanation
        GoldItem.objects.bulk_update(
            [gold_item for gold_item, _ in changes],
            ["expected_valid", "expected_label", "explanation"],
        )
    if is_active is True and not gold_round.is_active:
        gold_round = gold_round_activate(gold_round=gold_round)
    elif is_active is False and gold_round.is_active:
        gold_round = gold_round_deactivate(gold_round=gold_round)
    return gold_round
