"""The one place where ORM rows become `generation` records and generation results rows.

`generation` never imports Django; this module maps campaigns and originals to its
plain dataclasses and its annotated candidates back to unsaved `Candidate` rows.
"""

from collections.abc import Iterable

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from generation.decoding import DecodingConfig
from generation.pipeline import PipelineSettings
from generation.polyjuice import DEFAULT_CODES, PolyjuiceSettings
from generation.postprocess import AnnotatedCandidate
from generation.records import OriginalRecord

POLYJUICE_OPTIONS = {
    "name",
    "codes",
    "strategy",
    "model",
    "fluency_model",
    "blank_sets",
    "max_blanks",
    "sentence_blank",
    "per_prompt",
    "temperature",
    "top_p",
    "num_beams",
    "batch_size",
    "seed",
}


def original_record(original: Original) -> OriginalRecord:
    return OriginalRecord(
        key=str(original.pk),
        text=original.text,
        label=original.label.value,
        context=original.context,
    )


def original_records(originals: Iterable[Original]) -> list[OriginalRecord]:
    return [original_record(original) for original in originals]


def polyjuice_config(campaign: Campaign) -> dict:
    """The campaign's Polyjuice generator entry (defaults when it names none)."""
    for entry in campaign.generators or []:
        if isinstance(entry, dict) and entry.get("name", "polyjuice") == "polyjuice":
            return entry
    return {"name": "polyjuice"}


def pipeline_settings(campaign: Campaign, *, device: str = "auto") -> PipelineSettings:
    """PipelineSettings from the campaign's generator entry and fluency threshold.

    Bad settings raise InvalidInput naming the setting, before any model loads.
    """
    config = polyjuice_config(campaign)
    unknown = sorted(set(config) - POLYJUICE_OPTIONS)
    if unknown:
        raise InvalidInput(
            f"Unknown Polyjuice settings: {', '.join(unknown)}.",
            fields={f"generators.{name}": ["Not a Polyjuice setting."] for name in unknown},
        )
    try:
        decoding = DecodingConfig(
            per_prompt=int(config.get("per_prompt", 3)),
            temperature=float(config.get("temperature", 1.0)),
            top_p=float(config.get("top_p", 0.9)),
            num_beams=int(config.get("num_beams", 1)),
            do_sample=int(config.get("num_beams", 1)) <= 1,
            batch_size=int(config.get("batch_size", 32)),
            seed=config.get("seed", 0),
        )
        polyjuice = PolyjuiceSettings(
            codes=tuple(config.get("codes") or DEFAULT_CODES),
            strategy=str(config.get("strategy", "auto")),
            random_blank_sets=int(config.get("blank_sets", 3)),
            max_blanks=int(config.get("max_blanks", 3)),
            sentence_blank=bool(config.get("sentence_blank", True)),
            decoding=decoding,
            seed=int(config.get("seed", 0) or 0),
        )
    except (TypeError, ValueError) as error:
        raise InvalidInput(
            f"Invalid Polyjuice settings: {error}", fields={"generators": [str(error)]}
        ) from None
    return PipelineSettings(
        model=config.get("model") or None,
        fluency_model=config.get("fluency_model") or None,
        device=device,
        fluency_threshold=campaign.fluency_threshold,
        polyjuice=polyjuice,
    )


def candidate_row(
    campaign: Campaign, originals: dict[str, Original], annotated: AnnotatedCandidate
) -> Candidate:
    """An unsaved Candidate for one annotated result."""
    record = annotated.record
    fluency = annotated.fluency
    return Candidate(
        campaign=campaign,
        original=originals[record.original_key],
        text=record.text,
        source=CandidateSource.GENERATED,
        generator=record.generator,
        control_code=annotated.code,
        prompt=record.prompt,
        edit={**annotated.edit, "relationship": annotated.relationship.to_dict()},
        metadata={
            **record.metadata,
            "requested_code": record.control_code,
            "dropped_by": annotated.dropped_by,
        },
        fluency_full=None if fluency is None else fluency.full,
        fluency_changed=None if fluency is None else fluency.changed,
        status=CandidateStatus.GENERATED if annotated.kept else CandidateStatus.FILTERED,
    )
