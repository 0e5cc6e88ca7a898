"""A campaign's generator settings: checked once, for the settings page, the API and the runs.

A campaign's `generators` is a list of entries, e.g.
`[{"name": "polyjuice", "codes": ["negation"]}, {"name": "lexicon-remove",
"classifier": "vader"}]`: `name` picks a generator of the registry, `fluency_model`
the LM that scores its candidates, and every other key is one of that generator's
options. An empty list means Polyjuice with its defaults. Options an entry leaves out
take the site's defaults where it has them (the decoding engine and the inference
server: `settings.GENERATION_ENGINE`, `settings.INFERENCE_SERVER`). `targeting` picks
Polyjuice's slices (and a control code for them).

`entries_from_settings` is the one validator: an unknown generator, option, label or
targeting key is refused with a message under the field it concerns, never dropped.
The ML library is imported inside the functions (it loads torch).
"""

import dataclasses
import functools
import hashlib
import importlib.util
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from django.conf import settings as django_settings
from django.core.cache import cache

from cfannotate.campaigns.generator_options import ENGINE_OPTIONS, SERVER_OPTIONS
from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import InvalidInput

if TYPE_CHECKING:
    from generation.engines import ServerConfig

logger = logging.getLogger(__name__)

DEFAULT_GENERATORS = ({"name": "polyjuice"},)
# Keys of an entry that are not options of the generator itself.
ENTRY_KEYS = ("name", "fluency_model")
# Options whose values are label values of the campaign (dict options: keys and values),
# checked with their defaults: causal-negation's default target "no_relationship" makes
# no sense on a sentiment campaign, and is refused on save rather than mid-run.
LABEL_OPTIONS = ("source_labels", "target_label", "label_map", "label_choices")
TARGETING_KEYS = ("slices", "code")
# How the settings page describes each engine (where Polyjuice's model runs).
ENGINE_DESCRIPTIONS = {
    "auto": "auto: chosen by each worker's device (continuous batching on a GPU, loop on CPU)",
    "loop": "loop: our batched decoding loop, in the worker (best on CPU)",
    "continuous": "continuous: transformers' continuous batching, in the worker (best on a GPU)",
    "server": "server: an OpenAI-compatible inference server (vLLM, SGLang, TGI, llama.cpp)",
}


@dataclass(frozen=True)
class Bounds:
    """The values a numeric option may take: `low` to `high`, `low` itself excluded when
    `above_low` (a temperature of 0 divides by zero)."""

    low: float
    high: float
    above_low: bool = False

    def problem(self, value: float) -> str | None:
        """Why `value` is out of bounds, or None."""
        finite = not isinstance(value, float) or math.isfinite(value)
        above = value > self.low if self.above_low else value >= self.low
        if finite and above and value <= self.high:
            return None
        low = f"above {self.low}" if self.above_low else f"at least {self.low}"
        return f"Must be {low} and at most {self.high}."


# Every numeric option of the registered generators (an option means the same wherever
# it appears), bounded to what a run can do: a seed torch and NumPy accept, counts that
# make prompts, beams and batches a worker can hold. Checked when the settings are saved,
# so a value no run could use is refused then, not when a run fails on it.
OPTION_BOUNDS = {
    # Polyjuice (generation.polyjuice, generation.decoding)
    "seed": Bounds(0, 2**32 - 1),  # torch.Generator.manual_seed and NumPy's range
    "blank_sets": Bounds(0, 20),  # random blank sets per original, besides the sentence
    "max_blanks": Bounds(1, 10),  # spans per blank set
    "per_prompt": Bounds(1, 50),  # continuations per prompt
    "num_beams": Bounds(1, 50),  # A.3.1 used 10
    "temperature": Bounds(0, 10, above_low=True),
    "top_p": Bounds(0, 1, above_low=True),
    "batch_size": Bounds(1, 1024),  # prompts (concept-steered: searches) per forward pass
    "server_concurrency": Bounds(1, 256),
    "server_timeout": Bounds(0, 3600, above_low=True),  # seconds per request
    "server_retries": Bounds(0, 10),
    # Causal rules (generation.generators.causal_rules)
    "max_alt_distance": Bounds(0, 1),
    "max_tries": Bounds(1, 10),
    "max_tokens": Bounds(1, 10_000),  # an original's tokens; longer ones are skipped
    # Lexicon generators (generation.generators.lexicon)
    "min_valence": Bounds(0, 4, above_low=True),  # VADER's scale
    "negation_window": Bounds(1, 50),
    "min_similarity": Bounds(-1, 1),  # a cosine similarity
    "max_candidates": Bounds(1, 50),
    "proposal_count": Bounds(1, 1000),  # the paper: 100
    "max_replacements": Bounds(1, 50),
    # Concept-steered rewriting and NeuroLogic (generation.neurologic)
    "max_concepts": Bounds(1, 20),
    "min_prefix_tokens": Bounds(1, 100),
    "beam_size": Bounds(1, 100),
    "length_penalty": Bounds(0, 10),
    "no_repeat_ngram_size": Bounds(0, 10),
    "beta": Bounds(0, 10),
    "sat_tolerance": Bounds(0, 20),
    "prune_factor": Bounds(1, 1_000_000),  # a rank in the model's vocabulary
    "num_return": Bounds(1, 100),
    "max_new_tokens_factor": Bounds(0, 10),
    "max_new_tokens_extra": Bounds(0, 1000),
    "max_new_tokens_cap": Bounds(1, 4096),
}


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


FACTS_CACHE_KEY = "generation-facts"


@functools.cache
def _generation_facts() -> dict:
    """What the settings page shows of `generation/`, as JSON: every registered generator
    with its options' defaults, the decoding engines, the inference-server APIs, and
    Polyjuice's slices and control codes.

    Reading it imports every generator's module, and with them spaCy, torch and
    transformers: 8-12 s in a fresh process, which was the settings page's first load
    (issue 24). So it is kept in the shared cache under a fingerprint of `generation/`'s
    source, and a process that finds it there imports nothing. (Web processes import the
    modules as they start, before serving: `cfannotate.core.ml_imports`.)
    """
    key = f"{FACTS_CACHE_KEY}:{generation_fingerprint()}"
    facts = cache.get(key)
    if facts is not None:
        return facts
    facts = _generation_facts_read()
    cache.set(key, facts, timeout=None)
    return facts


def generation_fingerprint() -> str:
    """A hash of `generation/`'s source files (about 0.5 MB, a few milliseconds), found
    without importing the package: the same code gives the same key on every host."""
    spec = importlib.util.find_spec("generation")
    root = Path(next(iter(spec.submodule_search_locations)))
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(f"{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _generation_facts_read() -> dict:
    """The facts from the generator classes and engines themselves (imports them)."""
    from generation.engines import ENGINE_NAMES, SERVER_APIS
    from generation.generators import generator_class, generator_names
    from generation.slicing import SLICES
    from generation.tokens import CONTROL_CODES

    generators = []
    for name in generator_names():
        cls = generator_class(name)
        summary = (cls.__doc__ or "").strip().splitlines()
        defaults = {
            option: list(default) if isinstance(default, tuple) else default
            for option, default in _option_defaults(cls).items()
        }
        generators.append(
            {"name": name, "summary": summary[0] if summary else "", "defaults": defaults}
        )
    return {
        "generators": generators,
        "engines": list(ENGINE_NAMES),
        "server_apis": list(SERVER_APIS),
        "slices": [[name, item.description] for name, item in SLICES.items()],
        "codes": list(CONTROL_CODES),
    }


def generator_catalog() -> tuple[GeneratorInfo, ...]:
    """Every registered generator with its options and their defaults."""
    return tuple(GeneratorInfo(**row) for row in _generation_facts()["generators"])


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
    facts = _generation_facts()
    engines = [(name, ENGINE_DESCRIPTIONS.get(name, name)) for name in facts["engines"]]
    return engines, [(api, api) for api in facts["server_apis"]]


def engine_defaults(name: str = "polyjuice") -> dict:
    """What an entry that leaves out an engine option gets: the site's default where it
    has one, else the generator's (the settings page shows them as placeholders)."""
    own = next(info.defaults for info in generator_catalog() if info.name == name)
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
    facts = _generation_facts()
    slices = [(name, f"{name}: {description}") for name, description in facts["slices"]]
    return slices, [(code, code) for code in facts["codes"]]


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
    elif code is not None and not slices and "targeting.slices" not in errors:
        # Refused, not dropped: a code steers the blanks of the targeted slices only.
        errors["targeting.code"] = ["Choose the slices this control code targets."]
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
    out_of_range = _out_of_range(cls, options)
    for option, problem in out_of_range.items():
        errors.setdefault(f"{where}.{option}", []).append(problem)
    # The others are checked without them: no option is blamed twice.
    options = {key: value for key, value in options.items() if key not in out_of_range}
    options = _campaign_defaults(cls, options, label_values, slices)
    try:
        settings = settings_from_options(cls.Settings, options)
    except GeneratorOptionsError as error:
        for option, problem in _with_server_problems(cls, options, error.problems).items():
            errors.setdefault(f"{where}.{option}" if option else where, []).append(problem)
        return None
    if out_of_range:
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


def _out_of_range(cls: type, options: dict) -> dict[str, str]:
    """The generator's numeric options given out of OPTION_BOUNDS, and a `strategy` that
    is not a prompting strategy, each with why; a value of the wrong kind is left to
    `settings_from_options`, which names the kind."""
    from generation.strategies import STRATEGIES

    names = {item.name for item in dataclasses.fields(cls.Settings)}
    problems = {}
    for option, value in options.items():
        bounds = OPTION_BOUNDS.get(option)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if option in names and bounds is not None and number:
            problem = bounds.problem(value)
            if problem:
                problems[option] = problem
    strategies = ("auto", *STRATEGIES)
    strategy = options.get("strategy")
    if "strategy" in names and isinstance(strategy, str) and strategy not in strategies:
        problems["strategy"] = (
            f"Unknown prompting strategy {strategy!r}; choose {', '.join(strategies)}."
        )
    return problems


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


def inference_servers_probe(
    *, entries: Sequence[GeneratorEntry], before: Sequence[GeneratorEntry] = ()
) -> None:
    """Send one small request to each inference server `entries` name that `before` did not.

    A wrong URL or model name is refused when the settings are saved, not when a run
    starts: InvalidInput under `generators[i].server_url` (or `.server_model` when the
    server's message is about the model), with the server's own message. Call it outside
    any transaction: a request may take seconds, and must not hold a lock meanwhile.
    """
    known = {entry.server for entry in before if entry.server is not None}
    failures: dict[object, str] = {}
    fields: dict[str, list[str]] = {}
    for entry in entries:
        config = entry.server
        if config is None or config in known:
            continue
        if config not in failures:
            failures[config] = _probe_failure(config)
        if failures[config]:
            option = "server_model" if _about_model(failures[config], config) else "server_url"
            fields[f"generators[{entry.position}].{option}"] = [failures[config]]
    if fields:
        first = next(message for message in failures.values() if message)
        raise InvalidInput(f"The inference server refused these settings: {first}", fields=fields)


def _probe_failure(config) -> str:
    """Why the server at `config` cannot generate, in its own words; "" when it can."""
    from generation.engines.server import InferenceServerError, probe

    try:
        described = probe(config)
    except InferenceServerError as error:
        return str(error)
    logger.info("inference server %s answered: %s", config.base_url, described)
    return ""


def _about_model(message: str, config) -> bool:
    """Whether the refusal is about the model (not served, not accepted), not the URL:
    `probe` then names it as "the model 'name'"."""
    return f"the model {config.model!r}" in message
