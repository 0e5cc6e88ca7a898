"""The one interface every counterfactual generator fills, and the input checks they share.

A generator takes a batch of originals (text, label, context) and returns candidate
records; it never raises on bad input: an original it cannot perturb comes back in
`skipped` with a reason. What happens afterwards (dedupe, edits, control code,
relationship, fluency filter) is `generation.postprocess.annotate`, the same for all.
"""

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc

from generation.parsing import ParseCache
from generation.records import CandidateRecord, OriginalRecord

DEFAULT_MAX_TOKENS = 256  # longer originals are skipped: the methods are sentence-level


class GeneratorOptionsError(ValueError):
    """A generator was given an option it does not have, or a value of the wrong kind.

    `problems` maps each option at fault to what is wrong with it; the key "" holds a
    problem of the options together that no single option explains.
    """

    def __init__(self, message: str, *, problems: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems if problems is not None else {"": message}


@dataclass(frozen=True)
class Skipped:
    """An original a generator produced nothing for, and why (for the run's report).

    `not_for_label`: the generator does not convert the original's label at all (the
    causal rules' and the lexicon generators' source labels), so nothing was tried: a
    causal-strength campaign runs NEGATION on its causal sentences and STRENGTHEN on its
    conditional ones, and neither has failed on the other's.
    """

    original_key: str
    reason: str
    not_for_label: bool = False


@dataclass
class GeneratorOutput:
    candidates: list[CandidateRecord] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    def extend(self, other: "GeneratorOutput") -> None:
        self.candidates.extend(other.candidates)
        self.skipped.extend(other.skipped)


@dataclass
class GenerationContext:
    """What a run shares between generators: one parse cache, the device, a progress hook."""

    parses: ParseCache = field(default_factory=ParseCache)
    device: str = "auto"
    dtype: str = "auto"
    # A loaded causal LM that every LM-based generator uses in place of loading its
    # `model` setting: tests and benchmarks hand in a small model this way.
    lm: object | None = None
    progress: Callable[[int], None] | None = None  # called with the number of originals done
    # The task's label set, for generators that aim at the other labels (label-directed
    # Polyjuice); empty: label-agnostic. `label_examples`: the campaign's own
    # counterfactual pairs as generation.label_directed.LabelExample, worked examples.
    labels: tuple[str, ...] = ()
    label_examples: tuple = ()

    def advance(self, count: int = 1) -> None:
        if self.progress is not None:
            self.progress(count)


class Generator(Protocol):
    name: ClassVar[str]  # the registry name, recorded on every candidate

    def generate(
        self, originals: Sequence[OriginalRecord], *, context: GenerationContext
    ) -> GeneratorOutput: ...


def settings_from_options(settings_class: type, options: dict | None):
    """Build a generator's frozen settings dataclass from a plain dict (campaign JSON, CLI).

    Unknown keys and values of the wrong kind are refused with one clear message,
    so a typo in a campaign's settings never silently falls back to a default. The
    error's `problems` names every option at fault, so a form can point at each.
    """
    options = dict(options or {})
    known = {item.name: item for item in dataclasses.fields(settings_class)}
    problems: dict[str, str] = {}
    unknown = sorted(set(options) - set(known))
    if unknown:
        takes = f"this generator takes: {', '.join(sorted(known)) or 'no options'}"
        message = f"unknown option(s) {', '.join(unknown)}; {takes}"
        problems |= {name: f"unknown option; {takes}" for name in unknown}
    hints = typing.get_type_hints(settings_class)
    values = {}
    for name, value in options.items():
        if name in known:
            try:
                values[name] = _coerce(name, value, hints[name])
            except GeneratorOptionsError as error:
                problems[name] = str(error)
    invalid = _builds(settings_class, values)
    if invalid is not None:
        # Checked even beside unknown options, so that every problem is told at once.
        blamed = _blame(settings_class, values, invalid)
        problems |= {name: text for name, text in blamed.items() if name or not problems}
    if problems:
        messages = [message] if unknown else []
        messages += [text for name, text in problems.items() if name not in unknown]
        message = "; ".join(dict.fromkeys(text.rstrip(".") for text in messages))
        raise GeneratorOptionsError(message, problems=problems)
    return settings_class(**values)


def _builds(settings_class: type, values: dict) -> str | None:
    """None when these values make valid settings, else why not."""
    try:
        settings_class(**values)
    except (TypeError, ValueError) as error:
        return str(error)
    return None


def _blame(settings_class: type, values: dict, message: str) -> dict[str, str]:
    """The options that make valid values invalid together with the defaults.

    An option is at fault when leaving it out makes the rest valid; failing that, each
    option that is invalid on its own; failing that, the combination ("").
    """
    at_fault = {
        name: message
        for name in values
        if _builds(settings_class, {k: v for k, v in values.items() if k != name}) is None
    }
    if not at_fault:
        for name, value in values.items():
            alone = _builds(settings_class, {name: value})
            if alone is not None:
                at_fault[name] = alone
    return at_fault or {"": message}


def _coerce(name: str, value, hint):
    """Accept JSON-shaped values: lists for tuples, ints for floats; refuse the rest."""
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in arguments:
            return None
        errors = []
        for option in arguments:
            if option is type(None):
                continue
            try:
                return _coerce(name, value, option)
            except GeneratorOptionsError as error:
                errors.append(str(error))
        raise GeneratorOptionsError(errors[0] if errors else f"{name}: invalid value {value!r}")
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise GeneratorOptionsError(f"{name} must be a list, not {value!r}")
        item_hint = arguments[0] if arguments else typing.Any
        return tuple(_coerce(name, item, item_hint) for item in value)
    if hint is typing.Any:
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, bool):
        raise GeneratorOptionsError(f"{name} must be a whole number, not {value!r}")
    if isinstance(hint, type) and not isinstance(value, hint):
        kind = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}
        raise GeneratorOptionsError(
            f"{name} must be {kind.get(hint, hint.__name__)}, not {value!r}"
        )
    return value


_NON_LATIN_LETTER = re.compile(r"[^\W\d_a-zA-Z\u00C0-\u024F]")


# Of a text without function words, the share of words an English word list must know
# for it to count as English. Of the 28,297 sentences of the CAD sentiment train
# reviews, 66 have four words or more and no function word (nor a contraction of one,
# "don't"); 56 of them reach 0.6 ("Terrible acting, terrible plot, terrible effects.",
# "Makes 'Utopia' look like second runnerup."). French, German, Spanish and Italian
# sentences score 0.0 to 0.2 ("film", "mit").
ENGLISH_WORD_SHARE = 0.6


def _function_word(word: str) -> bool:
    """A stop word, or a contraction of one: "i'm", "don't", "doesn't", "it's"."""
    if word in STOP_WORDS:
        return True
    if word.endswith("n't") and word[:-3] in STOP_WORDS:
        return True
    head, _, tail = word.partition("'")
    return bool(tail) and head in STOP_WORDS


def _mostly_english_words(words: Sequence[str]) -> bool:
    from generation.sanity import word_list  # loaded once, only for texts that need it

    known = word_list()
    if not known:  # no word list installed: the function-word test alone decides
        return False
    return sum(word in known for word in words) >= ENGLISH_WORD_SHARE * len(words)


def input_problem(
    text: str,
    doc: Doc | None = None,
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    needs_verb: bool = True,
) -> str | None:
    """Why a text cannot be perturbed by a sentence-level English method, or None.

    Cheap checks every generator runs first: empty text, too long, not English
    (mostly non-Latin letters, or four or more words with not one English function
    word, unless an English word list knows at least three in five of them: terse
    English has no function words either, "Great acting, terrible plot, awful music.",
    "Poor sleep quality predicted higher blood pressure."), and, when a parse is
    given, no verb at all for the methods that
    edit a clause (`needs_verb`: negation and strengthening, concept-steered
    rewriting). Word and span editors (Polyjuice's infilling, lexicon removal and
    replacement) pass `needs_verb=False`: verbless texts are common and easy to edit
    ("What an awful show." → "What an awesome show.", SNLI's "A tall person on a bike").
    """
    if not text or not text.strip():
        return "empty text"
    letters = [character for character in text if character.isalpha()]
    if not letters:
        return "no words in the text"
    if sum(1 for character in letters if _NON_LATIN_LETTER.match(character)) > len(letters) / 2:
        return "not English: mostly non-Latin script"
    words = re.findall(r"[A-Za-z\u00C0-\u024F']+", text.lower())
    no_function_word = len(words) >= 4 and not any(_function_word(word) for word in words)
    if no_function_word and not _mostly_english_words(words):
        return "not English: no English function words"
    if doc is not None:
        if len(doc) > max_tokens:
            return f"text longer than {max_tokens} tokens ({len(doc)})"
        if needs_verb and not any(token.pos_ in ("VERB", "AUX") for token in doc):
            return "no verb in the text"
    return None


def candidate(
    original: OriginalRecord,
    text: str,
    *,
    generator: str,
    edit_type: str = "",
    intended_label: str | None = None,
    prompt: str = "",
    **metadata,
) -> CandidateRecord:
    """A candidate record with the generator's name and edit type filled in the same way by all."""
    return CandidateRecord(
        original_key=original.key,
        text=text,
        generator=generator,
        control_code=edit_type,
        intended_label=intended_label,
        prompt=prompt,
        metadata=metadata,
    )
