"""The generator registry: every generator a campaign or the command line can name.

Entries are import paths so that naming one generator never loads another's
models or dependencies.
"""

import importlib

from generation.generators.base import (
    GenerationContext,
    Generator,
    GeneratorOptionsError,
    GeneratorOutput,
    Skipped,
    settings_from_options,
)

GENERATORS: dict[str, str] = {
    "polyjuice": "generation.generators.polyjuice_generator:PolyjuiceGenerator",
    "causal-negation": "generation.generators.causal_rules:CausalNegation",
    "causal-strengthen": "generation.generators.causal_rules:CausalStrengthen",
    "lexicon-remove": "generation.generators.lexicon:LexiconRemove",
    "lexicon-replace": "generation.generators.lexicon:LexiconReplace",
    "concept-steered": "generation.generators.concept_steered:ConceptSteered",
}


class UnknownGenerator(ValueError):
    pass


def generator_names() -> list[str]:
    return list(GENERATORS)


def generator_class(name: str) -> type:
    try:
        path = GENERATORS[name]
    except KeyError:
        raise UnknownGenerator(
            f"unknown generator {name!r}; choose one of: {', '.join(GENERATORS)}"
        ) from None
    module_name, class_name = path.split(":")
    return getattr(importlib.import_module(module_name), class_name)


def load_generator(name: str, options: dict | None = None) -> Generator:
    """A ready generator from its registry name and a plain dict of options."""
    cls = generator_class(name)
    return cls(settings_from_options(cls.Settings, options))


__all__ = [
    "GENERATORS",
    "GenerationContext",
    "Generator",
    "GeneratorOptionsError",
    "GeneratorOutput",
    "Skipped",
    "UnknownGenerator",
    "generator_class",
    "generator_names",
    "load_generator",
    "settings_from_options",
]
