"""What every generator's output goes through: dedupe, edits, control code, relationship, fluency.

Polyjuice §3.2 and §4.1: drop copies of x and duplicates, compute the edit between
x and x̂ widened to parse subtrees, detect the primary control code, build r(x̂),
and drop x̂ whose log-probability falls more than the threshold below x on the
whole sentence or on the changed phrase.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from generation.control_codes import detect_code
from generation.edits import compute_edit
from generation.fluency import FluencyItem, FluencyScore, fluency_scores
from generation.parsing import ParseCache
from generation.records import CandidateRecord, OriginalRecord
from generation.relationship import Relationship, relationship_of

DEFAULT_FLUENCY_THRESHOLD = 10.0


@dataclass(frozen=True)
class AnnotatedCandidate:
    record: CandidateRecord
    code: str  # primary control code detected on (x, x̂)
    edit: dict  # generation.edits.Edit.to_dict()
    relationship: Relationship
    fluency: FluencyScore | None  # None when fluency was not scored
    dropped_by: str | None = None  # "fluency_full" | "fluency_changed" | None when kept

    @property
    def kept(self) -> bool:
        return self.dropped_by is None


@dataclass
class PostprocessStats:
    received: int = 0
    duplicates: int = 0
    copies: int = 0
    fluency_dropped: int = 0
    kept: int = 0


@dataclass
class PostprocessResult:
    candidates: list[AnnotatedCandidate] = field(default_factory=list)
    stats: PostprocessStats = field(default_factory=PostprocessStats)


def normalized_text(text: str) -> str:
    """The form two texts are compared in: lower case, runs of whitespace as one space."""
    return " ".join(text.lower().split())


def dedupe(
    records: list[CandidateRecord], originals: dict[str, OriginalRecord], stats: PostprocessStats
) -> list[CandidateRecord]:
    """One record per (original, text); copies of x removed."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for record in records:
        key = (record.original_key, normalized_text(record.text))
        if key in seen:
            stats.duplicates += 1
            continue
        seen.add(key)
        if key[1] == normalized_text(originals[record.original_key].text):
            stats.copies += 1
            continue
        unique.append(record)
    return unique


def _drop_reason(score: FluencyScore, threshold: float) -> str | None:
    if score.full < -threshold:
        return "fluency_full"
    if score.changed is not None and score.changed < -threshold:
        return "fluency_changed"
    return None


def annotate(
    records: list[CandidateRecord],
    originals: dict[str, OriginalRecord],
    *,
    parses: ParseCache,
    fluency_lm=None,
    threshold: float = DEFAULT_FLUENCY_THRESHOLD,
    batch_size: int = 64,
    progress: Callable[[str], None] | None = None,
) -> PostprocessResult:
    """Dedupe and annotate candidates; with `fluency_lm`, mark the disfluent ones dropped."""
    result = PostprocessResult()
    stats = result.stats
    stats.received = len(records)

    # 1. Dedupe and drop copies of x.
    unique = dedupe(records, originals, stats)

    # 2. Parse originals and candidates together, each text once.
    parses.parse_many([originals[r.original_key].text for r in unique] + [r.text for r in unique])
    if progress:
        progress("parsed")

    # 3. Edit ops widened to subtrees, primary control code, relationship r(x̂).
    annotated = []
    for record in unique:
        x = parses.parse(originals[record.original_key].text)
        x_hat = parses.parse(record.text)
        edit = compute_edit(x, x_hat)
        code = detect_code(x, x_hat, edit)
        annotated.append(
            (record, edit, code, relationship_of(record.original_key, x, x_hat, edit, code))
        )

    # 4. Fluency of x̂ against x, on the sentence and on each changed phrase.
    scores: list[FluencyScore | None] = [None] * len(annotated)
    if fluency_lm is not None and annotated:
        items = [
            FluencyItem(
                original=originals[record.original_key].text,
                candidate=record.text,
                phrases=tuple((op.source_chars, op.target_chars) for op in edit.ops),
            )
            for record, edit, _, _ in annotated
        ]
        scores = fluency_scores(fluency_lm, items, batch_size=batch_size)
        if progress:
            progress("scored")

    for (record, edit, code, relationship), score in zip(annotated, scores, strict=True):
        dropped_by = _drop_reason(score, threshold) if score is not None else None
        if dropped_by:
            stats.fluency_dropped += 1
        else:
            stats.kept += 1
        result.candidates.append(
            AnnotatedCandidate(
                record=record,
                code=code,
                edit=edit.to_dict(),
                relationship=relationship,
                fluency=score,
                dropped_by=dropped_by,
            )
        )
    return result
