"""Reading paired data (x, x̂) for training: JSONL, TSV, and the CAD formats of Kaushik et al.

`paired_data` finds every CAD sentiment and NLI file of a split under a data folder
(`../shared/data` holds them under `cad/`), for `python -m generation train --data`.
"""

import csv
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from generation import annotation_pool
from generation.parsing import SPACY_MODEL, load_nlp
from generation.text_files import check_utf8

csv.field_size_limit(10_000_000)

BREAK_TAGS = re.compile(r"<br\s*/?>", re.IGNORECASE)
# Pipeline components that splitting a review into sentences does not need.
SENTENCE_SPLIT_UNUSED = ("tagger", "attribute_ruler", "lemmatizer", "ner")
POOLED_MIN_TEXTS = 512  # from this many texts on, sentences are split in worker processes
SPLIT_CHUNK_TEXTS = 64


@dataclass(frozen=True)
class Pair:
    x: str
    x_hat: str


class PairFormatError(ValueError):
    """The file is not in the format asked for; the message names the file and the line."""


def _clean(text: str) -> str:
    return " ".join(BREAK_TAGS.sub(" ", text or "").split())


def _tsv_rows(path: Path, required: tuple[str, ...], expected: str) -> Iterator[dict]:
    """The rows of a TSV file with its `required` columns, each checked: a row with fewer
    or more fields than the header, or an empty required field, is named by its line."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if not set(required) <= set(reader.fieldnames or []):
            raise PairFormatError(f"{path}: {expected}")
        for row in reader:
            width = len(reader.fieldnames or [])
            fields = (
                width + len(row[None]) if None in row else sum(v is not None for v in row.values())
            )
            if fields != width:
                raise PairFormatError(
                    f"{path}:{reader.line_num}: {fields} fields where the header has {width} "
                    "(a tab missing or extra)."
                )
            empty = [column for column in required if not row[column].strip()]
            if empty:
                raise PairFormatError(f"{path}:{reader.line_num}: empty {', '.join(empty)}.")
            yield row


def read_jsonl_pairs(path: Path) -> list[Pair]:
    """One object per line with `x` and `x_hat` (or `original` and `counterfactual`)."""
    pairs = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise PairFormatError(f"{path}:{number}: not valid JSON ({error.msg}).") from None
            x = record.get("x", record.get("original")) if isinstance(record, dict) else None
            x_hat = record.get("x_hat", record.get("counterfactual")) if x is not None else None
            if not isinstance(x, str) or not isinstance(x_hat, str):
                raise PairFormatError(
                    f"{path}:{number}: needs string fields x and x_hat (or original and "
                    f"counterfactual)."
                )
            pairs.append(Pair(_clean(x), _clean(x_hat)))
    return pairs


def read_tsv_pairs(path: Path, x_column: str = "x", x_hat_column: str = "x_hat") -> list[Pair]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = {x_column, x_hat_column} - set(reader.fieldnames or [])
        if missing:
            raise PairFormatError(
                f"{path}: missing column(s) {', '.join(sorted(missing))}; found "
                f"{', '.join(reader.fieldnames or [])}."
            )
        return [Pair(_clean(row[x_column]), _clean(row[x_hat_column])) for row in reader]


def read_cad_sentiment(path: Path, *, max_sentences: int = 3) -> list[Pair]:
    """Review pairs sharing a batch_id, split into aligned sentence pairs that differ.

    Polyjuice A.1 split the IMDb paragraphs into paired sentences to match the length
    of its other data; reviews whose sentence counts differ are skipped.
    """
    by_batch: dict[str, list[str]] = defaultdict(list)
    expected = "expected CAD sentiment columns Sentiment, Text, batch_id."
    for row in _tsv_rows(path, ("Text", "batch_id"), expected):
        by_batch[row["batch_id"]].append(_clean(row["Text"]))
    reviews = [texts for texts in by_batch.values() if len(texts) == 2]
    split = iter(split_sentences([text for texts in reviews for text in texts]))
    pairs = []
    for _ in reviews:
        left, right = next(split), next(split)
        if len(left) != len(right):
            continue
        changed = [Pair(a, b) for a, b in zip(left, right, strict=True) if a != b]
        if 0 < len(changed) <= max_sentences:
            pairs.extend(changed)
    return pairs


def split_sentences(texts: list[str]) -> list[list[str]]:
    """The sentences of each text. Bounds come from the parser alone: without the
    components it does not read, the same sentences come out about three times faster.
    Many texts (all CAD reviews: half a minute of one core) go to the annotation pool's
    worker processes in chunks."""
    workers = annotation_pool.default_workers() if len(texts) >= POOLED_MIN_TEXTS else 0
    if not workers:
        return _sentences(load_nlp(exclude=SENTENCE_SPLIT_UNUSED), texts)
    return annotation_pool.map_chunks(
        _chunk_sentences, texts, chunk=SPLIT_CHUNK_TEXTS, workers=workers, model=SPACY_MODEL
    )


def _sentences(nlp, texts: list[str]) -> list[list[str]]:
    return [
        [sentence.text.strip() for sentence in doc.sents]
        for doc in nlp.pipe(texts, batch_size=SPLIT_CHUNK_TEXTS)
    ]


def _chunk_sentences(texts: list[str]) -> list[list[str]]:
    """In a pool worker: `_sentences` with the worker's pipeline, parser only."""
    nlp = annotation_pool.worker_nlp()
    with nlp.select_pipes(
        disable=[name for name in SENTENCE_SPLIT_UNUSED if name in nlp.pipe_names]
    ):
        return _sentences(nlp, texts)


def read_cad_nli(
    original_path: Path, revised_path: Path, *, field: str = "sentence2"
) -> list[Pair]:
    """Each original SNLI sentence paired with its human revisions (same premise or hypothesis)."""

    def rows(path: Path) -> list[dict]:
        expected = "expected columns sentence1, sentence2, gold_label."
        return list(_tsv_rows(path, ("sentence1", "sentence2"), expected))

    fixed = "sentence1" if field == "sentence2" else "sentence2"
    originals: dict[str, list[str]] = defaultdict(list)
    for row in rows(original_path):
        originals[row[fixed]].append(row[field])
    pairs = []
    for row in rows(revised_path):
        for original in originals.get(row[fixed], []):
            if original != row[field]:
                pairs.append(Pair(_clean(original), _clean(row[field])))
    return pairs


def read_pairs(path: Path, fmt: str = "auto", **options) -> list[Pair]:
    """Dispatch on `fmt`: jsonl, tsv, cad-sentiment, or auto (by extension). A file that
    is not UTF-8 is refused naming its first bad line (`text_files.NotUtf8`)."""
    if not path.exists():
        raise FileNotFoundError(f"No such file: {path}")
    if path.is_dir():
        raise PairFormatError(f"{path} is a directory, not a file of pairs.")
    try:
        return _read_pairs_as(path, fmt, **options)
    except UnicodeDecodeError:
        check_utf8(path)
        raise


def _read_pairs_as(path: Path, fmt: str, **options) -> list[Pair]:
    if fmt == "auto":
        fmt = "jsonl" if path.suffix in {".jsonl", ".json"} else "tsv"
    if fmt == "jsonl":
        return read_jsonl_pairs(path)
    if fmt == "tsv":
        return read_tsv_pairs(path, **options)
    if fmt == "cad-sentiment":
        return read_cad_sentiment(path)
    raise PairFormatError(f"Unknown pair format {fmt!r}; choose jsonl, tsv or cad-sentiment.")


# Paired data under a folder ------------------------------------------------------------

SENTIMENT_FOLDER = "sentiment_combined_paired"
NLI_ORIGINAL_FOLDER = "NLI_original"
# Revised folder -> the field the revision changed (the other one is the shared side).
NLI_REVISED_FOLDERS = {"NLI_revised_hypothesis": "sentence2", "NLI_revised_premise": "sentence1"}


class PairsNotFound(FileNotFoundError):
    """A data folder that is missing or holds no pair file of the splits asked for."""


@dataclass(frozen=True)
class PairSource:
    """One set of pairs found under a data folder: its name, task and the files it reads."""

    name: str  # e.g. "cad/sentiment_combined_paired/train", "cad/NLI_revised_premise/train"
    task: str  # "sentiment" or "nli"
    paths: tuple[Path, ...]
    field: str = ""  # NLI: the revised side, sentence1 or sentence2

    def read(self) -> list[Pair]:
        try:
            if self.task == "sentiment":
                return read_cad_sentiment(self.paths[0])
            return read_cad_nli(self.paths[0], self.paths[1], field=self.field)
        except UnicodeDecodeError:
            for path in self.paths:
                check_utf8(path)  # names the file and line that is not UTF-8
            raise


def find_pair_sources(data: Path, splits: tuple[str, ...] = ("train",)) -> list[PairSource]:
    """Every CAD sentiment and NLI pair file of `splits` under `data`, at any depth.

    Sentiment: `sentiment_combined_paired/{split}_paired.tsv`. NLI: each
    `NLI_revised_{hypothesis,premise}/{split}.tsv` with the `NLI_original/{split}.tsv`
    beside it. The dev split is left out by default: the quality report perturbs its
    originals.
    """
    data = Path(data)
    if not data.is_dir():
        raise PairsNotFound(f"No such data folder: {data}")
    sources = []
    for split in splits:
        for path in sorted(data.rglob(f"{SENTIMENT_FOLDER}/{split}_paired.tsv")):
            name = f"{path.parent.relative_to(data)}/{split}"
            sources.append(PairSource(name, "sentiment", (path,)))
        for folder, field in NLI_REVISED_FOLDERS.items():
            for revised in sorted(data.rglob(f"{folder}/{split}.tsv")):
                original = revised.parent.parent / NLI_ORIGINAL_FOLDER / f"{split}.tsv"
                if not original.is_file():
                    raise PairsNotFound(f"{revised} has no original beside it: {original}")
                name = f"{revised.parent.relative_to(data)}/{split}"
                sources.append(PairSource(name, "nli", (original, revised), field))
    if not sources:
        raise PairsNotFound(
            f"No paired data under {data} for split(s) {', '.join(splits)}: looked for "
            f"{SENTIMENT_FOLDER}/<split>_paired.tsv and {', '.join(NLI_REVISED_FOLDERS)}/"
            f"<split>.tsv beside {NLI_ORIGINAL_FOLDER}/<split>.tsv."
        )
    return sources


def paired_data(data: Path, splits: tuple[str, ...] = ("train",)) -> dict[str, list[Pair]]:
    """The pairs of every source `find_pair_sources` finds, by source name; a source that
    gives no pair at all is an error, since its file is not what its name says."""
    found = {}
    for source in find_pair_sources(data, splits):
        pairs = source.read()
        if not pairs:
            raise PairFormatError(f"{source.name}: no pair could be read from {source.paths[-1]}.")
        found[source.name] = pairs
    return found
