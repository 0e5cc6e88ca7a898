"""The one check of a campaign's `flip_label_map`: a model's label names -> the campaign's.

A text-classification model often names its labels LABEL_0/LABEL_1 or NEGATIVE/POSITIVE
(`config.id2label`); the classifier in the loop needs the campaign's label values. The
settings page takes the map as text, one `model label = campaign label` per line (`:`
also separates); the API as a JSON object. Both end in `label_map_entries_check`, so the
page and the API refuse the same entries with the same words.
"""

from collections.abc import Iterable, Sequence

from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.text import counted

SEPARATORS = ("=", ":")
MAX_ENTRIES = 1000  # far beyond any classifier's label count
# (where, model label, campaign label): "Line 2" on the page, the JSON key through the API.
# A campaign label of None: the line has no separator.
Entry = tuple[str, object, object]


def label_map_entries_check(
    entries: Iterable[Entry], *, labels: Sequence[tuple[str, str]]
) -> tuple[dict[str, str], list[str]]:
    """The map, each right-hand side as a label value, and every problem in entry order,
    each opened by its entry's `where`. `labels` are the campaign's (value, display name);
    either is accepted, in any case, as model labels are matched case-blind
    (`generation.label_classifiers.ModelDirectoryClassifier`)."""
    by_name = {value.lower(): value for value, _ in labels}
    for value, display_name in labels:
        by_name.setdefault(display_name.strip().lower(), value)  # a value stays its label's
    expected = ", ".join(value for value, _ in labels)
    mapping: dict[str, str] = {}
    first_seen: dict[str, str] = {}
    problems = []
    for where, model_label, campaign_label in entries:
        if campaign_label is None:
            problems.append(f"{where}: write it as “model label = campaign label”.")
            continue
        model_name = model_label.strip() if isinstance(model_label, str) else ""
        target = campaign_label.strip() if isinstance(campaign_label, str) else ""
        if not model_name:
            problems.append(f"{where}: no model label before the “=”.")
        elif model_name.lower() in first_seen:
            problems.append(
                f"{where}: the model label {model_name} is already mapped in "
                f"{first_seen[model_name.lower()]}."
            )
        else:
            first_seen[model_name.lower()] = where
            if not target:
                problems.append(f"{where}: no campaign label after the “=”; one of {expected}.")
            elif target.lower() not in by_name:
                problems.append(
                    f"{where}: {target} is not a label of this campaign; one of {expected}."
                )
            else:
                mapping[model_name] = by_name[target.lower()]
    if len(first_seen) > MAX_ENTRIES:
        problems.append(f"At most {MAX_ENTRIES} model labels.")
    return mapping, problems


def label_map_lines(text: str) -> list[Entry]:
    """The entries of the settings page's text, one a line; blank lines are skipped, and
    lines are counted from 1 as the researcher sees them."""
    entries: list[Entry] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        # The first `=` or `:` splits the line: label names hold neither in practice.
        positions = [line.find(mark) for mark in SEPARATORS if mark in line]
        if not positions:
            entries.append((f"Line {number}", line, None))
            continue
        split = min(positions)
        entries.append((f"Line {number}", line[:split], line[split + 1 :]))
    return entries


def label_map_check(mapping: object, *, labels: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The API's map checked: InvalidInput naming every bad entry under `flip_label_map`;
    else the map with each right-hand side a label value."""
    if not isinstance(mapping, dict):
        raise InvalidInput(
            "The model label map must be an object of model label to campaign label.",
            fields={"flip_label_map": ['An object, e.g. {"LABEL_0": "negative"}.']},
        )
    entries = [(f"“{key}”", key, "" if value is None else value) for key, value in mapping.items()]
    checked, problems = label_map_entries_check(entries, labels=labels)
    if problems:
        raise InvalidInput(
            f"The model label map has {counted(len(problems), 'problem')}.",
            fields={"flip_label_map": problems},
        )
    return checked


def label_map_text(mapping: object) -> str:
    """The map as the settings page shows it, one `model label = campaign label` a line."""
    if not isinstance(mapping, dict):
        return ""
    return "\n".join(f"{key} = {value}" for key, value in mapping.items())
