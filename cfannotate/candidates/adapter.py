"""The one place where ORM rows become `generation` records and generation results rows.

`generation` never imports Django; this module maps originals to the generation
library's plain records, a checked generator entry to its post-processing settings,
and annotated candidates back to unsaved `Candidate` rows. Which generators a campaign
runs, and with what options, is checked in `cfannotate.campaigns.generator_settings`.
"""

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cfannotate.campaigns.generator_settings import GeneratorEntry
from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from generation.records import OriginalRecord

if TYPE_CHECKING:  # the real import loads torch
    from generation.postprocess import AnnotatedCandidate

# Why post-processing dropped a candidate (its metadata["dropped_by"]), for the review
# page: the fluency filter's reasons and generation.sanity's REASONS.
DROP_REASON_LABELS = {
    "fluency_full": "much less fluent than the original",
    "fluency_changed": "the changed words read much less fluently",
    "too_long": "longer than the fluency model reads",
    "outside_blanks": "changed text outside the blanks",
    "near_copy": "same as the original but for case or punctuation",
    "truncated": "cut off mid-sentence",
    "run_on": "runs on past the sentence",
    "repeated_ngram": "repeats itself",
    "non_word": "contains a non-word",
    "fragment": "not a sentence (no verb)",
}
# The same reasons in a word or two, for the review page's per-original counts.
DROP_REASON_SHORT = {
    "fluency_full": "fluency",
    "fluency_changed": "fluency",
    "too_long": "too long",
    "outside_blanks": "outside blanks",
    "near_copy": "near copy",
    "truncated": "cut off",
    "run_on": "run-on",
    "repeated_ngram": "repeats",
    "non_word": "non-word",
    "fragment": "fragment",
}
IMPORTED_GENERATOR = "imported"


def original_record(original: Original) -> OriginalRecord:
    return OriginalRecord(
        key=str(original.pk),
        text=original.text,
        label=original.label.value,
        context=original.context,
    )


def original_records(originals: Iterable[Original]) -> list[OriginalRecord]:
    return [original_record(original) for original in originals]


def pipeline_settings(campaign: Campaign, entry: GeneratorEntry, *, device: str = "auto"):
    """The post-processing settings of one entry: its fluency model and the threshold."""
    from generation.pipeline import PipelineSettings

    return PipelineSettings(
        fluency_model=entry.fluency_model,
        device=device,
        fluency_threshold=campaign.fluency_threshold,
    )


# --------------------------------------------------------------------------- results


def intended_labels(
    campaign: Campaign, results: Iterable["AnnotatedCandidate"]
) -> dict[str, CampaignLabel]:
    """The campaign label of every intended label the results name.

    A generator's label is matched like an uploaded one (value, display name, the task's
    aliases); one the campaign does not have is an error, not a silent None.
    """
    from cfannotate.campaigns.services import label_lookup

    lookup = label_lookup(campaign)
    found: dict[str, CampaignLabel] = {}
    unknown: dict[str, set[str]] = {}
    for result in results:
        label = result.record.intended_label
        if label is None or label in found:
            continue
        match = lookup.get(str(label).strip().lower())
        if match is None:
            unknown.setdefault(result.record.generator, set()).add(str(label))
        else:
            found[label] = match
    if unknown:
        labels = ", ".join(campaign.labels.values_list("value", flat=True))
        raise InvalidInput(
            "A generator aimed at a label this campaign does not have: "
            + "; ".join(f"{name}: {', '.join(sorted(v))}" for name, v in sorted(unknown.items()))
            + f". The campaign's labels are {labels}.",
            fields={
                "generators": [
                    f"{name} intends {', '.join(sorted(v))}" for name, v in unknown.items()
                ]
            },
        )
    return found


def candidate_row(
    campaign: Campaign,
    originals: dict[str, Original],
    annotated: "AnnotatedCandidate",
    labels: dict[str, CampaignLabel],
    *,
    source: str = CandidateSource.GENERATED,
) -> Candidate:
    """An unsaved Candidate for one annotated result (generated or imported)."""
    record = annotated.record
    fluency = annotated.fluency
    return Candidate(
        campaign=campaign,
        original=originals[record.original_key],
        text=record.text,
        source=source,
        generator=record.generator,
        control_code=annotated.code,
        intended_label=labels.get(record.intended_label) if record.intended_label else None,
        prompt=record.prompt,
        edit={**annotated.edit, "relationship": annotated.relationship.to_dict()},
        metadata={
            **record.metadata,
            # The generator's own name for its edit: the Polyjuice code it asked for, or
            # e.g. "negation", "remove", "replace" (`control_code` is what was detected).
            "edit_type": record.control_code,
            "dropped_by": annotated.dropped_by,
        },
        fluency_full=None if fluency is None else fluency.full,
        fluency_changed=None if fluency is None else fluency.changed,
        status=CandidateStatus.GENERATED if annotated.kept else CandidateStatus.FILTERED,
    )
