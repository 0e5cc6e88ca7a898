"""The ML library (`generation/`, and with it spaCy, torch, transformers, scikit-learn),
imported in one thread as a web process starts, before its request threads run.

The app imports those modules inside functions, so a process that never generates
never pays for them. But two threads importing spaCy for the first time at once can
each find the other's half-initialized modules and fail: CPython takes a submodule's
import lock before it waits for the package, so each thread holds what the other needs,
and its deadlock check hands one of them a partial module ("cannot import name ... from
partially initialized module 'spacy.strings'"). A background import of the generator
modules, started once the settings page had been seen, raced generation's own imports
that way and failed a second `make demo`; in a threaded web server two first requests
could do the same. `cfannotate.wsgi` calls `ml_modules_load()` before it serves.
"""

import importlib

# Every `generation` module the app imports inside a function (a test keeps this list
# complete); the generators' own modules come through the registry.
LAZY_MODULES = (
    "generation.cli",
    "generation.engines",
    "generation.engines.base",
    "generation.engines.server",
    "generation.label_classifiers",
    "generation.label_directed",
    "generation.models",
    "generation.parsing",
    "generation.pipeline",
    "generation.postprocess",
    "generation.precision",
    "generation.priority",
    "generation.records",
    "generation.relationship",
    "generation.selection",
    "generation.slicing",
    "generation.strategies",
    "generation.tokens",
)


def ml_modules_load() -> None:
    """Import `LAZY_MODULES` and every registered generator's module, in this thread."""
    for name in LAZY_MODULES:
        importlib.import_module(name)
    from generation.generators import generator_class, generator_names

    for name in generator_names():
        generator_class(name)
