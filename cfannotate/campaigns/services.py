"""Writes of campaigns: creation from a task template, and importing originals."""

import contextlib
import math
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils.text import slugify

from cfannotate.campaigns.label_map import label_map_check
from cfannotate.campaigns.models import (
    SETTING_FIELDS,
    Campaign,
    CampaignLabel,
    Original,
    TaskType,
)
from cfannotate.campaigns.task_templates import LabelTemplate, template_for
from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.core.form_numbers import is_plain_number
from cfannotate.core.row_report import RowError, row_errors_raise
from cfannotate.core.text import sentence

MAX_TEXT_CHARS = 10_000

# Settings whose text ("NaN", "inf") the model field would read as a number.
_NUMERIC_SETTINGS = frozenset(
    name
    for name in SETTING_FIELDS
    if isinstance(
        Campaign._meta.get_field(name),
        models.IntegerField | models.FloatField | models.DecimalField,
    )
)


class CampaignAlreadyCreated(Conflict):
    """The new-campaign form was sent again: the campaign it made is `campaign`."""

    def __init__(self, campaign: Campaign) -> None:
        super().__init__(sentence(f"This form already created {campaign.name}"))
        self.campaign = campaign


def campaign_create(
    *,
    owner,
    name: str,
    task_type: str,
    labels: list[Mapping[str, str]] | None = None,
    text_name: str | None = None,
    context_name: str | None = None,
    instructions: str | None = None,
    settings: Mapping[str, object] | None = None,
    creation_token: str = "",
) -> Campaign:
    """Create a campaign with its label set.

    Template task types bring their labels, field names and instructions; any of
    them may be overridden. Custom tasks must give at least two labels. An inference
    server the generators name is probed first (see `_probe_new_servers`).

    `creation_token` (the new-campaign form's one-time token) makes one campaign however
    often the form is sent: again, it raises CampaignAlreadyCreated with that campaign.
    A database constraint holds it when two arrive at once.
    """
    creation_token = (creation_token or "").strip()
    _raise_if_created(owner, creation_token)
    _probe_new_servers(settings or {}, campaign=None, labels=labels, task_type=task_type)
    return _campaign_create(
        owner=owner,
        name=name,
        task_type=task_type,
        labels=labels,
        text_name=text_name,
        context_name=context_name,
        instructions=instructions,
        settings=settings,
        creation_token=creation_token,
    )


def _raise_if_created(owner, creation_token: str) -> None:
    if creation_token:
        earlier = Campaign.objects.filter(owner=owner, creation_token=creation_token).first()
        if earlier is not None:
            raise CampaignAlreadyCreated(earlier)


@transaction.atomic
def _campaign_create(
    *,
    owner,
    name: str,
    task_type: str,
    labels: list[Mapping[str, str]] | None,
    text_name: str | None,
    context_name: str | None,
    instructions: str | None,
    settings: Mapping[str, object] | None,
    creation_token: str,
) -> Campaign:
    name = (name or "").strip()
    if not name:
        raise InvalidInput("A campaign needs a name.", fields={"name": ["This field is required."]})
    if task_type not in TaskType.values:
        raise InvalidInput(
            f"Unknown task type {task_type!r}.",
            fields={"task_type": [f"Choose one of: {', '.join(TaskType.values)}."]},
        )
    template = template_for(task_type)
    label_templates = _label_templates(labels, template)

    campaign = Campaign(
        owner=owner,
        name=name,
        slug=_unique_slug(name),
        task_type=task_type,
        text_name=text_name or (template.text_name if template else "Sentence"),
        context_name=context_name
        if context_name is not None
        else (template.context_name if template else ""),
        instructions=instructions
        if instructions is not None
        else (template.instructions if template else ""),
        creation_token=creation_token,
    )
    if template is not None and template.generators and not labels:
        # The template's generators convert its own labels; a campaign that brings its
        # labels, or names its generators, keeps the site default or what it names.
        campaign.generators = [dict(entry) for entry in template.generators]
    _apply_settings(campaign, settings or {})
    _check_generation_settings(campaign, [label.value for label in label_templates])
    if "flip_label_map" in (settings or {}):
        campaign.flip_label_map = label_map_check(
            campaign.flip_label_map,
            labels=[(label.value, label.display_name) for label in label_templates],
        )
    # The token's constraint is left to the database: it alone sees a form sent twice at once.
    campaign.full_clean(exclude=["creation_token"])
    try:
        with transaction.atomic():
            campaign.save()
    except IntegrityError:
        _raise_if_created(owner, creation_token)  # the same form, sent at the same moment
        raise
    CampaignLabel.objects.bulk_create(
        CampaignLabel(
            campaign=campaign,
            value=label.value,
            display_name=label.display_name,
            description=label.description,
            position=position,
        )
        for position, label in enumerate(label_templates)
    )
    return campaign


def _apply_settings(campaign: Campaign, settings: Mapping[str, object]) -> None:
    for name, value in _settings_checked(settings).items():
        setattr(campaign, name, value)


def _settings_checked(settings: Mapping[str, object]) -> dict[str, object]:
    """The settings as their fields hold them, or InvalidInput naming each bad one: unknown
    names, infinity or NaN, null where a value is needed, and numbers that a field would
    quietly change (true read as 1, 1.5 cut to 1)."""
    unknown = sorted(set(settings) - set(SETTING_FIELDS))
    if unknown:
        raise InvalidInput(
            f"Unknown campaign settings: {', '.join(unknown)}.",
            fields={name: ["Not a campaign setting."] for name in unknown},
        )
    non_finite = sorted(
        where for name, value in settings.items() for where in _non_finite(name, value)
    )
    if non_finite:
        raise InvalidInput(
            f"Numbers must be finite: {', '.join(non_finite)}.",
            fields={
                where: ["Must be a finite number, not infinity or NaN."] for where in non_finite
            },
        )
    problems = {
        name: [problem]
        for name, value in settings.items()
        if (problem := _value_problem(Campaign._meta.get_field(name), value))
    }
    if problems:
        raise InvalidInput(f"Check these settings: {', '.join(sorted(problems))}.", fields=problems)
    return {
        name: Campaign._meta.get_field(name).to_python(value)
        if name in _NUMERIC_SETTINGS
        else value
        for name, value in settings.items()
    }


def _value_problem(field: models.Field, value: object) -> str:
    """Why `value` cannot be `field`'s as given ("" when it can): the field's own validation
    (`full_clean`) says the rest, naming the bounds."""
    if value is None:
        return "" if field.null else "Give a value; null is not one."
    if field.name not in _NUMERIC_SETTINGS:
        return ""
    if isinstance(value, bool):
        return "Give a number, not true or false."
    if isinstance(value, str) and not is_plain_number(value):
        return "Give a number in digits, e.g. 12 or 0.5."
    integral = isinstance(field, models.IntegerField)
    if integral and isinstance(value, float) and not value.is_integer():
        return "Give a whole number."
    try:
        field.to_python(value)
    except ValidationError:
        return "Give a whole number." if integral else "Give a number."
    return ""


def _non_finite(name: str, value: object) -> list[str]:
    """Where `value` holds infinity or NaN: `name`, or `name[i].option` inside JSON settings.

    JSON reads 1e999 as infinity, and text such as "NaN" or "inf" becomes one in a
    numeric field; neither can be compared with a bound nor rendered back as JSON.
    """
    if isinstance(value, str):
        if name not in _NUMERIC_SETTINGS:
            return []
        try:
            return [] if math.isfinite(float(value)) else [name]
        except ValueError:
            return []  # not a number at all: the field's own validation says so
    found = []
    stack = [(name, value)]  # a loop, as JSON settings nest
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{where}.{key}", child) for key, child in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((f"{where}[{index}]", child) for index, child in enumerate(item))
        elif isinstance(item, float | Decimal) and not _is_finite(item):
            found.append(where)
    return found


def _is_finite(number: float | Decimal) -> bool:
    return number.is_finite() if isinstance(number, Decimal) else math.isfinite(number)


def campaign_update(*, campaign: Campaign, settings: Mapping[str, object]) -> Campaign:
    """Change some of a campaign's per-stage settings (SETTING_FIELDS); the rest stay.

    The same checks as on creation: a bad generator entry is refused naming
    `generators[i].option`, before anything is saved or any model loads; an inference
    server the new generators name is probed (`_probe_new_servers`).
    """
    _probe_new_servers(settings, campaign=campaign)
    return _campaign_update(campaign=campaign, settings=settings)


@transaction.atomic
def _campaign_update(*, campaign: Campaign, settings: Mapping[str, object]) -> Campaign:
    campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
    settings = _settings_checked(settings)
    k = settings.get("judgments_per_candidate", campaign.judgments_per_candidate)
    if k != campaign.judgments_per_candidate and campaign.units.exists():
        raise InvalidInput(
            "K cannot change once labeling units exist: they were created for "
            f"{campaign.judgments_per_candidate} judgments each, and the vote counts on it.",
            fields={"judgments_per_candidate": ["Fixed once labeling units exist."]},
        )
    _apply_settings(campaign, settings)
    _check_generation_settings(campaign, list(campaign.labels.values_list("value", flat=True)))
    if "flip_label_map" in settings:
        campaign.flip_label_map = label_map_check(
            campaign.flip_label_map,
            labels=list(campaign.labels.values_list("value", "display_name")),
        )
    campaign.full_clean()
    campaign.save(update_fields=[*settings, "updated_at"])
    return campaign


def _probe_new_servers(
    settings: Mapping[str, object],
    *,
    campaign: Campaign | None,
    labels: list[Mapping[str, str]] | None = None,
    task_type: str = "",
) -> None:
    """Probe the inference servers that `settings` add to the campaign's generators.

    Before the transaction: a probe is a network request (SQLite's write lock, taken at
    the transaction's start, would stop every other writer meanwhile). Settings that fail
    the other checks are left to them; nothing server-related changed, nothing is sent.
    """
    from cfannotate.campaigns.generator_settings import (
        entries_from_settings,
        generator_entries,
        inference_servers_probe,
    )

    if "generators" not in settings:
        return
    before = []
    try:
        if campaign is None:
            label_values = [
                label.value for label in _label_templates(labels, template_for(task_type))
            ]
        else:
            label_values = list(campaign.labels.values_list("value", flat=True))
        entries = entries_from_settings(settings["generators"], label_values=label_values)
    except InvalidInput:
        return
    if campaign is not None:
        # Saved settings that no longer pass (new site defaults) count as none: probe all.
        with contextlib.suppress(InvalidInput):
            before = generator_entries(campaign)
    inference_servers_probe(entries=entries, before=before)


def _check_generation_settings(campaign: Campaign, label_values: list[str]) -> None:
    """The generator entries and targeting, checked against the label set (the adapter's rules)."""
    from cfannotate.campaigns.generator_settings import entries_from_settings

    entries_from_settings(
        campaign.generators, label_values=label_values, targeting=campaign.targeting
    )


def _label_templates(labels: list[Mapping[str, str]] | None, template) -> list[LabelTemplate]:
    if not labels:
        if template is None:
            raise InvalidInput(
                "A custom task needs its labels.",
                fields={"labels": ["Give at least two labels."]},
            )
        return list(template.labels)
    parsed = []
    errors = []
    for index, item in enumerate(labels):
        value = slugify(str(item.get("value", ""))).replace("-", "_")
        display = str(item.get("display_name") or item.get("value") or "").strip()
        if not value or not display:
            errors.append(f"Label {index + 1} needs a value made of letters, digits or _.")
            continue
        too_long = _label_too_long(index + 1, value=value, display_name=display)
        if too_long:
            errors += too_long
            continue
        parsed.append(LabelTemplate(value, display, str(item.get("description", "")).strip()))
    values = [label.value for label in parsed]
    if len(set(values)) != len(values):
        errors.append("Label values must be distinct.")
    names = [label.display_name for label in parsed]
    if len(set(names)) != len(names):
        errors.append("Label display names must be distinct.")
    if not errors:
        errors += _shared_spellings(parsed)
    if len(parsed) < 2 and not errors:
        errors.append("Give at least two labels.")
    if errors:
        raise InvalidInput("The label set is invalid.", fields={"labels": errors})
    return parsed


def _label_too_long(number: int, **parts: str) -> list[str]:
    """What of label `number` (its value, its display name) its column cannot hold."""
    problems = []
    for name, text in parts.items():
        most = CampaignLabel._meta.get_field(name).max_length
        if len(text) > most:
            what = name.replace("_", " ")
            problems.append(f"Label {number}'s {what} is longer than {most} characters.")
    return problems


def _shared_spellings(labels: list[LabelTemplate]) -> list[str]:
    """Imports read a label by its value or its display name, in any case: two labels
    that share a spelling ("yes" / display name "Yes" of another) could not be told apart."""
    owner: dict[str, int] = {}
    problems, named = [], set()
    for number, label in enumerate(labels, start=1):
        for spelling in dict.fromkeys([label.value.lower(), label.display_name.lower()]):
            first = owner.setdefault(spelling, number)
            if first != number and (first, number) not in named:
                named.add((first, number))
                problems.append(
                    f"Labels {first} and {number} are both spelled {spelling!r} (a value or a "
                    "display name, in any case): a file's labels could not tell them apart."
                )
    return problems


def _unique_slug(name: str) -> str:
    base = slugify(name)[:60] or "campaign"
    slug = base
    while Campaign.objects.filter(slug=slug).exists():
        slug = f"{base}-{secrets.token_hex(3)}"
    return slug


def label_lookup(campaign: Campaign) -> dict[str, CampaignLabel]:
    """Every spelling accepted for each label: value, display name, template aliases."""
    lookup: dict[str, CampaignLabel] = {}
    labels = list(campaign.labels.all())
    # Values first: a display name never takes another label's value (`_shared_spellings`
    # refuses such sets; this keeps older campaigns' imports reading values as values).
    for label in labels:
        lookup[label.value.lower()] = label
    for label in labels:
        lookup.setdefault(label.display_name.lower(), label)
    template = template_for(campaign.task_type)
    if template:
        by_value = {label.value: label for label in labels}
        for alias, value in template.label_aliases.items():
            if value in by_value:
                lookup.setdefault(alias.lower(), by_value[value])
    return lookup


@dataclass(frozen=True)
class OriginalsChecked:
    originals: list[Original]  # unsaved, one per valid record, in record order
    errors: list[RowError]  # RowError.row: 1 for the first record


ORIGINAL_FIELDS = ("id", "text", "context", "label")
MAX_EXTERNAL_ID_CHARS = 200


def originals_check(
    *, campaign: Campaign, records: Iterable[Mapping[str, object]]
) -> OriginalsChecked:
    """What importing `records` would create, and every problem of every record.

    A record has `text`, `label`, optionally `id` and (for pair tasks) `context`;
    other keys are kept in `extra`. Nothing is written.
    """
    known = _KnownOriginals.of(campaign)
    errors: list[RowError] = []
    originals: list[Original] = []
    # A single-text campaign has no context: a "context" key is kept with the other
    # extra keys, as an uploaded file's column of that name is.
    own = ORIGINAL_FIELDS if campaign.is_pair_task else ("id", "text", "label")
    for row, record in enumerate(records, start=1):
        row_errors = [
            RowError(row, name, problem)
            for name in own
            if (problem := _field_type_problem(name, record.get(name)))
        ]
        if row_errors:
            errors.extend(row_errors)
            continue
        text = _field_text(record.get("text"))
        context = _field_text(record.get("context")) if campaign.is_pair_task else ""
        raw_label = _field_text(record.get("label"))
        external_id = _field_text(record.get("id")) or f"row-{known.next_number + row - 1}"
        row_errors += _text_problems(row, campaign, text, context)
        label = known.labels.get(raw_label.lower())
        if label is None:
            row_errors.append(
                RowError(
                    row, "label", f"Unknown label {raw_label!r}; expected one of {known.allowed}."
                )
            )
        row_errors += _id_problems(row, external_id, known)
        known.seen_ids.add(external_id)
        if row_errors:
            errors.extend(row_errors)
            continue
        extra = {key: value for key, value in record.items() if key not in own}
        originals.append(
            Original(
                campaign=campaign,
                external_id=external_id,
                text=text,
                context=context,
                label=label,
                extra=extra,
            )
        )
    return OriginalsChecked(originals=originals, errors=errors)


def _field_type_problem(name: str, value: object) -> str:
    if isinstance(value, list | dict):
        return "Must be text or a number, not a list or an object."
    if isinstance(value, bool) and name != "label":  # a label may be true/false
        return "Must be text or a number, not true or false."
    return ""


def _field_text(value: object) -> str:
    """A record's field as text: 0 is "0", a missing field or null is ""."""
    return "" if value is None else str(value).strip()


@dataclass
class _KnownOriginals:
    """What checking a campaign's new originals compares them with, read once."""

    labels: dict[str, CampaignLabel]  # every accepted spelling
    allowed: str  # the label values, for messages
    existing_ids: set[str]
    next_number: int  # of the first original, for ids the records leave out
    seen_ids: set[str]  # ids of the records checked so far

    @classmethod
    def of(cls, campaign: Campaign) -> "_KnownOriginals":
        return cls(
            labels=label_lookup(campaign),
            allowed=", ".join(campaign.labels.values_list("value", flat=True)),
            existing_ids=set(campaign.originals.values_list("external_id", flat=True)),
            next_number=campaign.originals.count() + 1,
            seen_ids=set(),
        )


def _text_problems(row: int, campaign: Campaign, text: str, context: str) -> list[RowError]:
    problems = []
    if not text:
        problems.append(RowError(row, "text", "The text is empty."))
    elif len(text) > MAX_TEXT_CHARS:
        problems.append(
            RowError(
                row,
                "text",
                f"The text has {len(text):,} characters; the limit is {MAX_TEXT_CHARS:,}.",
            )
        )
    if campaign.is_pair_task and not context:
        problems.append(RowError(row, "context", f"The {campaign.context_name.lower()} is empty."))
    elif len(context) > MAX_TEXT_CHARS:
        problems.append(
            RowError(
                row,
                "context",
                f"The {campaign.context_name.lower() or 'context'} has {len(context):,} "
                f"characters; the limit is {MAX_TEXT_CHARS:,}.",
            )
        )
    return problems


def _id_problems(row: int, external_id: str, known: _KnownOriginals) -> list[RowError]:
    if len(external_id) > MAX_EXTERNAL_ID_CHARS:
        return [
            RowError(
                row,
                "id",
                f"The id has {len(external_id)} characters; the limit is {MAX_EXTERNAL_ID_CHARS}.",
            )
        ]
    if external_id in known.seen_ids:
        return [RowError(row, "id", f"The id {external_id!r} is used twice.")]
    if external_id in known.existing_ids:
        return [
            RowError(row, "id", f"The id {external_id!r} is already an original of this campaign.")
        ]
    return []


@transaction.atomic
def originals_import(*, campaign: Campaign, records: Iterable[Mapping[str, object]]) -> int:
    """Validate every record, then insert all of them or none.

    The records are those of `originals_check`. Raises InvalidInput with one entry
    per bad row.
    """
    checked = originals_check(campaign=campaign, records=records)
    row_errors_raise(checked.errors)
    return originals_create(originals=checked.originals)


def originals_create(*, originals: list[Original]) -> int:
    """Insert originals that `originals_check` passed; the caller holds the transaction."""
    if not originals:
        raise InvalidInput("The dataset has no rows; nothing was imported.")
    try:
        with transaction.atomic():
            Original.objects.bulk_create(originals, batch_size=1000)
    except IntegrityError:
        # Checked ids can still collide with an import that committed in between.
        raise Conflict(
            "Another import added originals with some of these ids meanwhile; "
            "nothing was imported. Check the campaign's originals and try again."
        ) from None
    return len(originals)
