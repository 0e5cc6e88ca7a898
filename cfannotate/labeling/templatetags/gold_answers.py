"""`{% for row in gold_round|answer_rows:failed %}`: a gold round's answer form, row by row.

Each row shows the stored answers, or, for the round whose answers were just refused
(`gold_views.RefusedAnswers`), what the researcher typed, with the problems of each field.
"""

from django import template

register = template.Library()


@register.filter
def answer_rows(gold_round, failed=None) -> list[dict]:
    """(item, number, valid, label, explanation, problems) for each item of the round."""
    refused = failed if failed is not None and failed.round_id == gold_round.id else None
    rows = []
    for number, item in enumerate(gold_round.items.all(), start=1):
        stored = {
            "valid": "true" if item.expected_valid else "false",
            "label": item.expected_label.value,
            "explanation": item.explanation,
        }
        typed = refused.typed.get(item.id, stored) if refused else stored
        problems = refused.problems.get(item.id, {}) if refused else {}
        rows.append({"item": item, "number": number, **typed, "problems": problems})
    return rows
