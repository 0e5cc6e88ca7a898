"""The one place where ORM rows become `generation` records and generation results rows.

`generation` never imports Django; this module maps a campaign's settings to the
generation library's generators, originals to its plain records, and its annotated
candidates back to unsaved `Candidate` rows.

A campaign's `generators` is a list of entries, e.g.
`[{"name": "polyjuice", "codes": ["negation"]}, {"name": "lexicon-remove",
"classifier": "vader"}]`: `name` picks a generator of the registry, `fluency_model`
the LM that scores its candidates, and every other key is one of that generator's
options. An empty list means Polyjuice with its defaults. Options an entry leaves out
take the site's defaults where it has them (the decoding engine and the inference
server: `settings.GENERATION_ENGINE`, `settings.INFERENCE_SERVER`).
"""

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING

from django.conf import settings as django_settings

from cfannotate.campaigns.generator_options import ENGINE_OPTIONS, SERVER_OPTIONS
from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
from cfannotate.core.exceptions import InvalidInput
from generation.records import OriginalRecord

if TYPE_CHECKING:  # the real import loads torch; checking settings must not
    from generation.engines import ServerConfig
    from generation.postprocess import AnnotatedCandidate

DEFAULT_GENERATORS = ({"name": "polyjuice"},)
# Why post-processing dropped a candidate (its metadata["dropped_by"]), for the review
# page: the fluency filter's reasons and generation.sanity's REASONS.
DROP_REASON_LABELS = {
    "fluency_full": "much less fluent than the original",
    "fluency_changed": "the changed words read much less fluently",
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
    "outside_blanks": "outside blanks",
    "near_copy": "near copy",
    "truncated": "cut off",
    "run_on": "run-on",
    "repeated_ngram": "repeats",
    "non_word": "non-word",
    "fragment": "fragment",
}
# Keys of an entry that are not options of the generator itself.
ENTRY_KEYS = ("name", "fluency_model")
# Options whose values are label values of the campaign (dict options: keys and values),
# checked with their defaults: causal-negation's default target "no_relationship" makes
# no sense on a sentiment campaign, and is refused on save rather than mid-run.
LABEL_OPTIONS = ("source_labels", "target_label", "label_map", "label_choices")
TARGETING_KEYS = ("slices", "code")
IMPORTED_GENERATOR = "imported"
# How the settings page describes each engine (where Polyjuice's model runs).
ENGINE_DESCRIPTIONS = {
    "auto": "auto: chosen by each worker's device (continuous batching on a GPU, loop on CPU)",
    "loop": "loop: our batched decoding loop, in the worker (best on CPU)",
    "continuous": "continuous: transformers' continuous batching, in the worker (best on a GPU)",
    "server": "server: an OpenAI-compatible inference server (vLLM, SGLang, TGI, llama.cpp)",
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


# --------------------------------------------------------------------------- generators


@dataclass(frozen=True)
class GeneratorEntry:
    """One checked entry of `campaign.generators`: what to load, and how to score it."""

    position: int  # index in the campaign's list, for error messages
    name: str
    options: dict = field(default_factory=dict)  # with the campaign's defaults filled in
    fluency_model: str | None = None
    server: "ServerConfig | None" = None  # the inference server it generates through, if any

    def load(self):
        from generation.generators import load_generator

        return load_generator(self.name, self.options)


@dataclass(frozen=True)
class GeneratorInfo:
    """What the settings page shows of one registered generator."""

    name: str
    summary: str  # the first line of the generator's docstring
    defaults: dict  # its options and their defaults, as JSON would write them


@functools.cache
def generator_catalog() -> tuple[GeneratorInfo, ...]:
    """Every registered generator with its options (imports their modules once per process)."""
    from generation.generators import generator_class, generator_names

    catalog = []
    for name in generator_names():
        cls = generator_class(name)
        summary = (cls.__doc__ or "").strip().splitlines()
        defaults = {
            option: list(default) if isinstance(default, tuple) else default
            for option, default in _option_defaults(cls).items()
        }
        catalog.append(GeneratorInfo(name, summary[0] if summary else "", defaults))
    return tuple(catalog)


def _option_defaults(cls: type) -> dict:
    """Every option of a generator with its default."""
    return {
        option.name: option.default_factory()
        if option.default is dataclasses.MISSING
        else option.default
        for option in dataclasses.fields(cls.Settings)
    }


def engine_choices() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(engines, inference-server APIs) as (value, label) for the settings page."""
    from generation.engines import ENGINE_NAMES, SERVER_APIS

    engines = [(name, ENGINE_DESCRIPTIONS.get(name, name)) for name in ENGINE_NAMES]
    return engines, [(api, api) for api in SERVER_APIS]


def engine_defaults(name: str = "polyjuice") -> dict:
    """What an entry that leaves out an engine option gets: the site's default where it
    has one, else the generator's (the settings page shows them as placeholders)."""
    from generation.generators import generator_class

    own = _option_defaults(generator_class(name))
    site = {
        f"server_{key}": value
        for key, value in django_settings.INFERENCE_SERVER.items()
        if value not in (None, "")
    }
    return {
        **{option: own[option] for option in ENGINE_OPTIONS if option in own},
        **site,
        "engine": django_settings.GENERATION_ENGINE,
    }


def targeting_choices() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(slices as (name, "name: description"), control codes) for the targeting form."""
    from generation.slicing import SLICES
    from generation.tokens import CONTROL_CODES

    slices = [(name, f"{name}: {item.description}") for name, item in SLICES.items()]
    return slices, [(code, code) for code in CONTROL_CODES]


def generator_entries(campaign: Campaign) -> list[GeneratorEntry]:
    """The campaign's generator entries, checked; InvalidInput before any model loads."""
    labels = list(campaign.labels.values_list("value", flat=True))
    return entries_from_settings(
        campaign.generators, label_values=labels, targeting=campaign.targeting
    )


def entries_from_settings(
    generators: object, *, label_values: Sequence[str], targeting: object = None
) -> list[GeneratorEntry]:
    """Check a `generators` setting (and the `targeting` Polyjuice uses) against a label set.

    Every problem is reported at once, each under the field it concerns, e.g.
    `generators[1].min_valence` or `generators[0].name`; nothing is loaded.
    """
    errors: dict[str, list[str]] = {}
    slices = _targeting_options(targeting, errors)
    if generators in (None, []):
        generators = list(DEFAULT_GENERATORS)
    if not isinstance(generators, list):
        errors["generators"] = ['A list of entries such as {"name": "polyjuice"}.']
        generators = []
    entries = []
    for position, entry in enumerate(generators):
        checked = _entry(position, entry, label_values, slices, errors)
        if checked is not None:
            entries.append(checked)
    if errors:
        names = ", ".join(sorted(errors))
        raise InvalidInput(f"Invalid generator settings: {names}.", fields=errors)
    return entries


def _targeting_options(targeting: object, errors: dict[str, list[str]]) -> dict:
    """Polyjuice's slice options from the campaign's targeting (Polyjuice §4.1)."""
    from generation.slicing import get_slice
    from generation.tokens import CONTROL_CODES

    if not targeting:
        return {}
    if not isinstance(targeting, Mapping):
        errors["targeting"] = ['An object such as {"slices": ["preposition"], "code": "lexical"}.']
        return {}
    for key in sorted(set(targeting) - set(TARGETING_KEYS)):
        errors[f"targeting.{key}"] = ["Not a targeting setting; use slices and code."]
    slices = targeting.get("slices") or []
    code = targeting.get("code")
    if not isinstance(slices, list) or not all(isinstance(name, str) for name in slices):
        errors["targeting.slices"] = ["A list of slicing function names."]
        slices = []
    for name in slices:
        try:
            get_slice(name)
        except ValueError as error:
            errors.setdefault("targeting.slices", []).append(f"Invalid targeting: {error}")
    if code is not None and code not in CONTROL_CODES:
        errors["targeting.code"] = [
            f"Invalid targeting: unknown control code {code!r}; "
            f"choose from {', '.join(CONTROL_CODES)}."
        ]
    if not slices or any(field.startswith("targeting") for field in errors):
        return {}  # reported once, under targeting, not again under each Polyjuice entry
    return {"slices": slices, **({"slice_code": code} if code else {})}


def _entry(
    position: int,
    entry: object,
    label_values: Sequence[str],
    slices: dict,
    errors: dict[str, list[str]],
) -> GeneratorEntry | None:
    from generation.generators import (
        GeneratorOptionsError,
        UnknownGenerator,
        generator_class,
        settings_from_options,
    )

    where = f"generators[{position}]"
    if not isinstance(entry, Mapping):
        errors[where] = ['An object such as {"name": "polyjuice", "codes": ["negation"]}.']
        return None
    name = entry.get("name", "polyjuice")
    try:
        cls = generator_class(name) if isinstance(name, str) else None
    except UnknownGenerator as error:
        errors[f"{where}.name"] = [f"{str(error)[0].upper()}{str(error)[1:]}."]
        return None
    if cls is None:
        errors[f"{where}.name"] = ["The registry name of a generator, as text."]
        return None
    fluency_model = entry.get("fluency_model")
    if fluency_model is not None and not isinstance(fluency_model, str):
        errors[f"{where}.fluency_model"] = ["A model name or directory, as text."]
    options = {key: value for key, value in entry.items() if key not in ENTRY_KEYS}
    options = _campaign_defaults(cls, options, label_values, slices)
    try:
        settings = settings_from_options(cls.Settings, options)
    except GeneratorOptionsError as error:
        for option, problem in _with_server_problems(cls, options, error.problems).items():
            errors.setdefault(f"{where}.{option}" if option else where, []).append(problem)
        return None
    label_problems = _unknown_labels(settings, label_values)
    for option, problem in label_problems.items():
        errors.setdefault(f"{where}.{option}", []).append(problem)
    key_problem = _api_key_env_problem(settings)
    if key_problem:
        errors.setdefault(f"{where}.server_api_key_env", []).append(key_problem)
    if label_problems or key_problem or f"{where}.fluency_model" in errors:
        return None
    server = settings.server() if callable(getattr(settings, "server", None)) else None
    return GeneratorEntry(position, name, options, fluency_model or None, server)


def _campaign_defaults(cls: type, options: dict, label_values: Sequence[str], slices: dict):
    """What a generator takes from the campaign unless its entry says otherwise: the
    label set (to steer toward the other labels) and Polyjuice's targeting slices; and
    from the site: the decoding engine, and with the server engine the server's options."""
    names = {item.name for item in dataclasses.fields(cls.Settings)}
    filled = dict(options)
    if "label_choices" in names and "label_choices" not in filled:
        filled["label_choices"] = list(label_values)
    if "slices" in names and "slices" not in filled:
        filled |= slices
    site_engine = django_settings.GENERATION_ENGINE
    # Written only where it differs from the generator's own default.
    if "engine" in names and "engine" not in filled and site_engine != cls.Settings.engine:
        filled["engine"] = site_engine
    if filled.get("engine") == "server":
        for key, value in django_settings.INFERENCE_SERVER.items():
            option = f"server_{key}"
            if option in names and value not in (None, ""):
                filled.setdefault(option, value)
    return filled


def _with_server_problems(cls: type, options: dict, problems: dict[str, str]) -> dict[str, str]:
    """`problems`, with those of the inference-server options each under its own option.

    A server's settings are checked all at once (`ServerConfig`), so the generic blame
    can pin a bad URL on `engine`; its message names each option at fault instead. An
    unknown engine is told alone.
    """
    if "engine" in problems and options.get("engine") != "server":
        # An unknown engine: what it says of the server's options follows from that alone.
        return {option: text for option, text in problems.items() if option not in SERVER_OPTIONS}
    server = getattr(cls.Settings, "server", None)
    if options.get("engine") != "server" or server is None:
        return problems
    try:
        # The Settings' own mapping to a ServerConfig, run on the options alone: building
        # the Settings is what failed.
        server(SimpleNamespace(**(_option_defaults(cls) | options)))
    except TypeError:  # a value of the wrong kind: the generic problems say which
        return problems
    except ValueError as error:
        found: dict[str, str] = {}
        for part in str(error).rstrip(".").split("; "):
            option = part.split(" ", 1)[0]
            found[option if option in SERVER_OPTIONS else ""] = f"{part}."
        others = {
            option: text
            for option, text in problems.items()
            if option and option not in ENGINE_OPTIONS
        }
        return others | found
    return problems


def _api_key_env_problem(settings) -> str | None:
    """Why the entry may not name its API-key variable, or None.

    The key is sent to the URL the entry names, so only the variables the site lists may
    be named; the value is never repeated (a key pasted here by mistake stays unshown).
    """
    name = getattr(settings, "server_api_key_env", "")
    if not name or name in django_settings.INFERENCE_SERVER_API_KEY_ENVS:
        return None
    allowed = ", ".join(django_settings.INFERENCE_SERVER_API_KEY_ENVS) or "none"
    return (
        "Not an environment variable this site allows for inference-server keys "
        f"(allowed: {allowed}); an admin lists them in CFANNOTATE_INFERENCE_SERVER_API_KEY_ENVS. "
        "Give the variable's name, never the key itself."
    )


def _unknown_labels(settings, label_values: Sequence[str]) -> dict[str, str]:
    """Label options (set or default) that name a label the campaign does not have."""
    known = set(label_values)
    problems = {}
    for option in LABEL_OPTIONS:
        value = getattr(settings, option, None)
        if not value:
            continue
        named = (
            [value]
            if isinstance(value, str)
            else [*value.keys(), *value.values()]
            if isinstance(value, Mapping)
            else list(value)
        )
        unknown = [label for label in named if label not in known]
        if unknown:
            problems[option] = (
                f"Not a label of this campaign: {', '.join(map(repr, unknown))}; "
                f"its labels are {', '.join(label_values)}."
            )
    return problems


def fluency_model_of(campaign: Campaign) -> str | None:
    """The first fluency model an entry names (imports score with it); None: the default."""
    for entry in campaign.generators or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("fluency_model"), str):
            return entry["fluency_model"] or None
    return None


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
