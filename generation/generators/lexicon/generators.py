"""RM-CT and REP-CT (Yang et al., 2021, §3): remove or replace a sentence's causal opinion terms.

Both generators share steps 1-4 and 6 of `LexiconGenerator.generate`; only the edit
(step 5) differs. See lexicon.md beside this package for the design and deviations.
"""

import abc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from spacy.tokens import Doc

from generation.generators.base import (
    DEFAULT_MAX_TOKENS,
    GenerationContext,
    GeneratorOutput,
    Skipped,
    candidate,
    input_problem,
)
from generation.generators.lexicon.opinion_lexicon import (
    NEGATIVE,
    POSITIVE,
    opinion_lexicon,
    opposite,
    replacement_words,
)
from generation.generators.lexicon.replacement import (
    RankedReplacement,
    rank_replacements,
    same_part_of_speech,
)
from generation.generators.lexicon.rewrite import match_case, removal_span, rewrite
from generation.generators.lexicon.sensitivity import (
    CLASSIFIERS,
    ClassifierUnavailable,
    SentimentScorer,
    build_scorer,
    gold_probabilities,
    relative_drops,
)
from generation.generators.lexicon.terms import NEGATION, CausalTerm, find_terms
from generation.records import OriginalRecord


@dataclass(frozen=True)
class LexiconSettings:
    # Which classifier measures term importance (Eq. 1): "baseline" is the TF-IDF logistic
    # regression of generation.priority fitted on the batch's originals; "vader" needs no data.
    classifier: str = "baseline"
    # Labels read as positive / negative (case-insensitive); the sentiment task's are
    # "positive" and "negative" (cfannotate.campaigns.task_templates).
    positive_labels: tuple[str, ...] = ("positive", "pos")
    negative_labels: tuple[str, ...] = ("negative", "neg")
    # |VADER mean valence| (scale -4..4) a word needs to be an opinion word.
    min_valence: float = 1.0
    # How many tokens after "not"/"no"/"never" the negation reaches.
    negation_window: int = 4
    # Keep a candidate only when its MiniLM cosine similarity to the original is at least
    # this (the paper keeps MoverScore > 0.55); None keeps every candidate.
    min_similarity: float | None = 0.5
    # Counterfactuals per original at most.
    max_candidates: int = 1
    # Longer originals are skipped: the method is sentence-level.
    max_tokens: int = DEFAULT_MAX_TOKENS

    def __post_init__(self) -> None:
        if self.classifier not in CLASSIFIERS:
            raise ValueError(
                f"classifier must be one of {', '.join(CLASSIFIERS)}, not {self.classifier!r}"
            )
        positive = {label.lower() for label in self.positive_labels}
        negative = {label.lower() for label in self.negative_labels}
        if not positive or not negative:
            raise ValueError("positive_labels and negative_labels each need at least one label")
        if positive & negative:
            raise ValueError(f"labels both positive and negative: {sorted(positive & negative)}")
        if not 0 < self.min_valence <= 4:
            raise ValueError(f"min_valence must be in (0, 4], not {self.min_valence}")
        if self.min_similarity is not None and not -1 <= self.min_similarity <= 1:
            raise ValueError(f"min_similarity must be in [-1, 1], not {self.min_similarity}")
        for name in ("negation_window", "max_candidates", "max_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")


@dataclass
class _Prepared:
    """An admitted original: its parse, gold polarity and usable terms, most important first."""

    original: OriginalRecord
    doc: Doc
    polarity: str
    gold_probability: float
    terms: list[tuple[CausalTerm, float]]  # (term, importance by Eq. 1)


@dataclass
class _Draft:
    text: str
    edit_type: str
    intended_label: str | None
    metadata: dict = field(default_factory=dict)


class LexiconGenerator(abc.ABC):
    """The shared pipeline; subclasses choose which terms they use and how they edit them."""

    name: ClassVar[str]
    edit_type: ClassVar[str]
    Settings: ClassVar[type] = LexiconSettings

    def __init__(self, settings: LexiconSettings | None = None) -> None:
        self.settings = settings or self.Settings()

    def generate(
        self, originals: Sequence[OriginalRecord], *, context: GenerationContext
    ) -> GeneratorOutput:
        output = GeneratorOutput()

        def skip(original: OriginalRecord, reason: str, *, not_for_label: bool = False) -> None:
            output.skipped.append(Skipped(original.key, reason, not_for_label=not_for_label))
            context.advance(1)

        # 1. Admit originals with a sentiment label and a perturbable English sentence.
        admitted = []
        for original in originals:
            polarity = self._polarity(original.label)
            if polarity is None:
                skip(original, self._label_problem(original.label), not_for_label=True)
                continue
            problem = input_problem(original.text)
            doc = None
            if problem is None:
                doc = context.parses.parse(original.text)
                problem = input_problem(
                    original.text, doc, max_tokens=self.settings.max_tokens, needs_verb=False
                )
            if problem is not None:
                skip(original, problem)
                continue
            admitted.append((original, doc, polarity))
        if not admitted:
            return output
        # 2. The classifier whose sensitivity ranks terms, fitted on every labelled original.
        try:
            scorer = self._scorer(originals)
        except ClassifierUnavailable as error:
            for original, _, _ in admitted:
                skip(original, str(error))
            return output
        # 3-4. Candidate causal terms that agree with the gold label, ranked by Eq. 1.
        prepared = []
        for original, doc, polarity in admitted:
            item = self._prepare(original, doc, polarity, scorer)
            if isinstance(item, str):
                skip(original, item)
            else:
                prepared.append(item)
        # 5. The edits themselves.
        labels = self._label_names(originals)
        drafted: list[tuple[_Prepared, list[_Draft]]] = []
        for item in prepared:
            drafts = self._edit(item, labels, context)
            if isinstance(drafts, str):
                skip(item.original, drafts)
                continue
            self._score_edits(item, drafts, scorer)
            drafted.append((item, drafts))
            context.advance(1)
        # 6. Closeness: keep counterfactuals near their original (§3.3).
        self._keep_close(drafted, output)
        return output

    # -- step 1 ---------------------------------------------------------------------------

    def _polarity(self, label: str) -> str | None:
        label = str(label).lower()
        if label in {name.lower() for name in self.settings.positive_labels}:
            return POSITIVE
        if label in {name.lower() for name in self.settings.negative_labels}:
            return NEGATIVE
        return None

    def _label_problem(self, label: str) -> str:
        return (
            f"label {label!r} is neither positive ({', '.join(self.settings.positive_labels)}) "
            f"nor negative ({', '.join(self.settings.negative_labels)}); "
            "set positive_labels / negative_labels"
        )

    def _label_names(self, originals: Sequence[OriginalRecord]) -> dict[str, str]:
        """The label to write for each polarity: as the batch spells it, else the first setting."""
        names = {
            POSITIVE: self.settings.positive_labels[0],
            NEGATIVE: self.settings.negative_labels[0],
        }
        found: dict[str, str] = {}
        for original in originals:
            polarity = self._polarity(original.label)
            if polarity is not None:
                found.setdefault(polarity, original.label)
        return names | found

    # -- step 2 ---------------------------------------------------------------------------

    def _scorer(self, originals: Sequence[OriginalRecord]) -> SentimentScorer:
        labelled = [
            (original, self._polarity(original.label))
            for original in originals
            if original.text.strip() and self._polarity(original.label) is not None
        ]
        return build_scorer(
            self.settings.classifier,
            [original.text for original, _ in labelled],
            [polarity for _, polarity in labelled],
            [original.context for original, _ in labelled],
        )

    # -- steps 3-4 ------------------------------------------------------------------------

    @abc.abstractmethod
    def _usable(self, term: CausalTerm) -> bool:
        """Whether this method can edit the term (RM-CT: negations and modifiers only)."""

    @abc.abstractmethod
    def _unusable_reason(self, polarity: str) -> str:
        """Why no agreeing term could be edited, for the skip report."""

    def _prepare(
        self, original: OriginalRecord, doc: Doc, polarity: str, scorer: SentimentScorer
    ) -> "_Prepared | str":
        lexicon = opinion_lexicon(self.settings.min_valence)
        terms = find_terms(doc, lexicon, self.settings.negation_window)
        if not terms:
            return "no opinion word or negation in the text"
        agreeing = [term for term in terms if term.polarity == polarity]
        if not agreeing:
            return f"no opinion term agrees with the label ({polarity})"
        usable = [term for term in agreeing if self._usable(term)]
        if not usable:
            return self._unusable_reason(polarity)
        masked = [rewrite(doc, remove=term.masked).text for term in usable]
        scores = gold_probabilities(
            scorer, [original.text, *masked], [original.context] * (len(masked) + 1), polarity
        )
        drops = relative_drops(float(scores[0]), scores[1:])
        ranked = sorted(
            zip(usable, drops.tolist(), strict=True), key=lambda pair: (-pair[1], pair[0].edited)
        )
        return _Prepared(original, doc, polarity, float(scores[0]), ranked)

    # -- step 5 ---------------------------------------------------------------------------

    @abc.abstractmethod
    def _edit(
        self, item: _Prepared, labels: dict[str, str], context: GenerationContext
    ) -> "list[_Draft] | str":
        """The edited texts of one original (remove or replace), or why there are none."""

    def _score_edits(self, item: _Prepared, drafts: list[_Draft], scorer: SentimentScorer) -> None:
        """Record what the classifier makes of each edit: its gold score and whether it flipped."""
        texts = [draft.text for draft in drafts]
        after = gold_probabilities(
            scorer, texts, [item.original.context] * len(texts), item.polarity
        )
        for draft, probability in zip(drafts, after.tolist(), strict=True):
            draft.metadata |= {
                "classifier": self.settings.classifier,
                "gold_probability": round(item.gold_probability, 4),
                "gold_probability_after": round(probability, 4),
                "classifier_flipped": probability < 0.5,
            }

    # -- step 6 ---------------------------------------------------------------------------

    def _keep_close(
        self, drafted: list[tuple[_Prepared, list[_Draft]]], output: GeneratorOutput
    ) -> None:
        threshold = self.settings.min_similarity
        similarities: list[float | None]
        pairs = [(item.original.text, draft.text) for item, drafts in drafted for draft in drafts]
        if threshold is None or not pairs:
            similarities = [None] * len(pairs)
        else:
            from generation.metrics import embedding_distances

            distances = embedding_distances([a for a, _ in pairs], [b for _, b in pairs])
            similarities = [1.0 - distance for distance in distances]
        position = 0
        for item, drafts in drafted:
            kept, best = 0, None
            for draft in drafts:
                similarity = similarities[position]
                position += 1
                if similarity is not None:
                    best = similarity if best is None else max(best, similarity)
                    draft.metadata["similarity"] = round(similarity, 4)
                    if similarity < threshold:
                        continue
                output.candidates.append(
                    candidate(
                        item.original,
                        draft.text,
                        generator=self.name,
                        edit_type=draft.edit_type,
                        intended_label=draft.intended_label,
                        **draft.metadata,
                    )
                )
                kept += 1
            if not kept:
                output.skipped.append(
                    Skipped(
                        item.original.key,
                        f"every counterfactual is too far from the original "
                        f"(best similarity {best:.2f} < {threshold})",
                    )
                )


class LexiconRemove(LexiconGenerator):
    """RM-CT: remove the most important opinion modifier or negation that agrees with the label.

    Removing a negation ("not a bad film" -> "a bad film") flips the sentiment, so its
    candidate intends the opposite label; removing an opinion modifier ("a superb
    film" -> "a film") only weakens it, and the candidate states no intended label.
    """

    name = "lexicon-remove"
    edit_type = "remove"

    @dataclass(frozen=True)
    class Settings(LexiconSettings):
        pass

    def _usable(self, term: CausalTerm) -> bool:
        return term.removable

    def _unusable_reason(self, polarity: str) -> str:
        return (
            f"no removable {polarity} term: the opinion words are not modifiers "
            "and no negation agrees with the label"
        )

    def _edit(
        self, item: _Prepared, labels: dict[str, str], context: GenerationContext
    ) -> "list[_Draft] | str":
        drafts = []
        for term, importance in item.terms[: self.settings.max_candidates]:
            flips = term.kind == NEGATION
            drafts.append(
                _Draft(
                    text=rewrite(item.doc, remove=removal_span(item.doc[term.edited])).text,
                    edit_type=self.edit_type,
                    intended_label=labels[opposite(item.polarity)] if flips else None,
                    metadata={
                        "term": term.text,
                        "term_kind": term.kind,
                        "removed": item.doc[term.edited].text,
                        "importance": round(importance, 4),
                    },
                )
            )
        return drafts


class LexiconReplace(LexiconGenerator):
    """REP-CT: replace the label's opinion words, most important first, by LM-ranked opposites."""

    name = "lexicon-replace"
    edit_type = "replace"

    @dataclass(frozen=True)
    class Settings(LexiconSettings):
        # A different counterfactual per rank: the k-th uses each word's k-th best replacement.
        max_candidates: int = 3
        # The causal LM that proposes and ranks replacements; None is the packaged default.
        model: str | None = None
        # Replacements proposed per word from the LM's next-token scores (the paper: 100).
        proposal_count: int = 50
        # Opinion words replaced per sentence at most, most important first.
        max_replacements: int = 4
        # Sentences per LM forward pass when ranking.
        batch_size: int = 32

        def __post_init__(self) -> None:
            super().__post_init__()
            for name in ("proposal_count", "max_replacements", "batch_size"):
                if getattr(self, name) < 1:
                    raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")

    def _usable(self, term: CausalTerm) -> bool:
        return term.replaceable

    def _unusable_reason(self, polarity: str) -> str:
        return f"no replaceable {polarity} opinion word"

    def _edit(
        self, item: _Prepared, labels: dict[str, str], context: GenerationContext
    ) -> "list[_Draft] | str":
        from generation.models import DEFAULT_MODEL, load_cached

        lm = context.lm or load_cached(
            self.settings.model or DEFAULT_MODEL, context.device, context.dtype
        )
        # 1. Replace terms one at a time, each ranked in the sentence the earlier choices made.
        chosen: dict[int, str] = {}
        rankings: list[tuple[CausalTerm, float, list[RankedReplacement]]] = []
        for term, importance in item.terms[: self.settings.max_replacements]:
            try:
                ranked = self._rank(lm, item.doc, term, chosen, context)
            except ValueError as error:  # the text is longer than the model reads
                return f"the language model cannot score this text: {error}"
            if ranked:
                chosen[term.edited] = ranked[0].word
                rankings.append((term, importance, ranked))
        if not rankings:
            return "no replacement word for the opinion terms"
        # 2. The k-th counterfactual takes each word's k-th best replacement.
        drafts, seen = [], set()
        for rank in range(self.settings.max_candidates):
            picks = [
                (term, imp, ranked[min(rank, len(ranked) - 1)]) for term, imp, ranked in rankings
            ]
            text = rewrite(
                item.doc, replace={term.edited: pick.word for term, _, pick in picks}
            ).text
            if text in seen:
                continue
            seen.add(text)
            drafts.append(
                _Draft(
                    text=text,
                    edit_type=self.edit_type,
                    intended_label=labels[opposite(item.polarity)],
                    metadata={
                        "rank": rank,
                        "replacements": [
                            {
                                "term": term.text,
                                "from": item.doc[term.edited].text,
                                "to": match_case(pick.word, item.doc[term.edited].text),
                                "importance": round(importance, 4),
                                "logprob": round(pick.logprob, 3),
                            }
                            for term, importance, pick in picks
                        ],
                    },
                )
            )
        return drafts

    def _rank(
        self, lm, doc: Doc, term: CausalTerm, chosen: dict[int, str], context: GenerationContext
    ) -> list[RankedReplacement]:
        """The best replacements of one term, each read by the parser as the part of speech
        of the word it replaces (no adjective in a noun's slot)."""
        token = doc[term.edited]
        current = rewrite(doc, replace=chosen)
        pool = replacement_words(
            self.settings.min_valence, opposite(term.word_polarity), token.tag_
        )

        def rewritten(word: str):
            return rewrite(doc, replace=chosen | {term.edited: word})

        ranked = rank_replacements(
            lm,
            prefix=current.text[: current.starts[term.edited]],
            surfaces={word: match_case(word, token.text) for word in pool},
            sentence_with=lambda word: rewritten(word).text,
            proposal_count=self.settings.proposal_count,
            batch_size=self.settings.batch_size,
        )
        return same_part_of_speech(
            ranked,
            old=token,
            start_of=lambda word: rewritten(word).starts[term.edited],
            parse_many=context.parses.parse_many,
            wanted=self.settings.max_candidates,
        )
