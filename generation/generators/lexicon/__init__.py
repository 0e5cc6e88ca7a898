"""Lexicon remove / replace counterfactuals (RM-CT and REP-CT of Yang et al., 2021)."""

from generation.generators.lexicon.generators import (
    LexiconGenerator,
    LexiconRemove,
    LexiconReplace,
    LexiconSettings,
)

__all__ = ["LexiconGenerator", "LexiconRemove", "LexiconReplace", "LexiconSettings"]
