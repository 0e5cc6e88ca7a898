"""Gold and training rounds: counterfactuals with known answers, written by the researcher.

Hidden gold rounds are mixed into every assignment and score workers (Appendix C.2);
training rounds open an assignment and show the expected answers afterwards. Both are
rounds on an original of the campaign that is kept out of the real units, so nothing
about a gold round's original gives it away.
"""

from collections.abc import Iterable, Mapping

from django.db import transaction

from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.services import MAX_TEXT_CHARS, RowError, label_lookup, row_errors_raise
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.models import GoldItem, GoldKind, GoldRound, LabelingUnit

GOLD_GENERATOR = "gold"
MAX_ITEMS = 10
VALID_SPELLINGS = {True: True, False: False, "valid": True, "invalid": False, "true": True}
VALID_SPELLINGS.update({"false": False, "1": True, "0": False, "yes": True, "no": False})


def _valid(value) -> bool | None:
    key = value.strip().lower() if isinstance(value, str) else value
    return VALID_SPELLINGS.get(key) if isinstance(key, str | bool) else None


def _item_errors(row: int, number: int, item, lookup, original_text: str, seen: set) -> list:
    where = f"items[{number}]"
    if not isinstance(item, Mapping):
        return [RowError(row, where, "Each item is an object with text, valid and label.")]
    errors = []
    text = str(item.get("text") or "").strip()
    if not text:
        errors.append(RowError(row, f"{where}.text", "The text is empty."))
    elif len(text) > MAX_TEXT_CHARS:
        errors.append(RowError(row, f"{where}.text", f"Longer than {MAX_TEXT_CHARS} characters."))
    elif text == original_text:
        errors.append(RowError(row, f"{where}.text", "The same as the original."))
    elif text in seen:
        errors.append(RowError(row, f"{where}.text", "Given twice in this round."))
    seen.add(text)
    if _valid(item.get("valid", True)) is None:
        errors.append(RowError(row, f"{where}.valid", "Use true or false."))
    if str(item.get("label") or "").strip().lower() not in lookup:
        errors.append(RowError(row, f"{where}.label", f"Unknown label {item.get('label')!r}."))
    return errors


@transaction.atomic
def gold_rounds_import(*, campaign: Campaign, records: Iterable[Mapping[str, object]]) -> int:
    """Create gold or training rounds from records; all of them or none.

    A record: `{"original_id": "s01", "kind": "gold" | "training", "items": [{"text":
    ..., "valid": true, "label": "negative", "explanation": "..."}]}`.
    """
    lookup = label_lookup(campaign)
    originals = {original.external_id: original for original in campaign.originals.all()}
    in_units = set(
        LabelingUnit.objects.filter(campaign=campaign).values_list("original_id", flat=True)
    )
    errors: list[RowError] = []
    plans = []
    for row, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            errors.append(RowError(row, "record", "Each row is an object."))
            continue
        row_errors = []
        original = originals.get(str(record.get("original_id") or "").strip())
        kind = str(record.get("kind") or GoldKind.GOLD).strip().lower()
        items = record.get("items")
        if original is None:
            row_errors.append(
                RowError(row, "original_id", f"No original {record.get('original_id')!r}.")
            )
        elif original.id in in_units:
            row_errors.append(
                RowError(
                    row,
                    "original_id",
                    "This original is already in labeling units; gold rounds need originals "
                    "workers do not also see in real rounds.",
                )
            )
        if kind not in GoldKind.values:
            row_errors.append(RowError(row, "kind", "Use gold or training."))
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
            row_errors.append(RowError(row, "items", f"Give 1 to {MAX_ITEMS} items."))
        else:
            seen: set[str] = set()
            for number, item in enumerate(items, start=1):
                row_errors += _item_errors(
                    row, number, item, lookup, original.text if original else "", seen
                )
        errors += row_errors
        if not row_errors:
            plans.append((original, kind, items))
    row_errors_raise(errors)
    if not plans:
        raise InvalidInput("The file has no gold rounds; nothing was imported.")

    for original, kind, items in plans:
        gold_round = GoldRound.objects.create(campaign=campaign, original=original, kind=kind)
        for position, item in enumerate(items, start=1):
            text = str(item["text"]).strip()
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
            GoldItem.objects.create(
                gold_round=gold_round,
                candidate=candidate,
                position=position,
                expected_valid=_valid(item.get("valid", True)),
                expected_label=lookup[str(item["label"]).strip().lower()],
                explanation=str(item.get("explanation") or "").strip(),
            )
    return len(plans)
