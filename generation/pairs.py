"""Reading paired data (x, x̂) for training: JSONL, TSV, and the CAD formats of Kaushik et al."""

import csv
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from generation.parsing import load_nlp

csv.field_size_limit(10_000_000)

BREAK_TAGS = re.compile(r"<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class Pair:
    x: str
    x_hat: str


class PairFormatError(ValueError):
    """The file is not in the format asked for; the message names the file and the line."""


def _clean(text: str) -> str:
    return " ".join(BREAK_TAGS.sub(" ", text or "").split())


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
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        if not {"Text", "batch_id"} <= set(reader.fieldnames or []):
            raise PairFormatError(
                f"{path}: expected CAD sentiment columns Sentiment, Text, batch_id."
            )
        for row in reader:
            by_batch[row["batch_id"]].append(_clean(row["Text"]))
    nlp = load_nlp()
    pairs = []
    for texts in by_batch.values():
        if len(texts) != 2:
            continue
        docs = list(nlp.pipe(texts))
        left = [sentence.text.strip() for sentence in docs[0].sents]
        right = [sentence.text.strip() for sentence in docs[1].sents]
        if len(left) != len(right):
            continue
        changed = [Pair(a, b) for a, b in zip(left, right, strict=True) if a != b]
        if 0 < len(changed) <= max_sentences:
            pairs.extend(changed)
    return pairs


def read_cad_nli(
    original_path: Path, revised_path: Path, *, field: str = "sentence2"
) -> list[Pair]:
    """Each original SNLI sentence paired with its human revisions (same premise or hypothesis)."""

    def rows(path: Path) -> list[dict]:
        with path.open(encoding="utf-8", newline="") as handle:
            reader = csv.DictReader(handle, delimiter="\t")
            if not {"sentence1", "sentence2"} <= set(reader.fieldnames or []):
                raise PairFormatError(f"{path}: expected columns sentence1, sentence2, gold_label.")
            return list(reader)

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
    """Dispatch on `fmt`: jsonl, tsv, cad-sentiment, or auto (by extension)."""
    if not path.exists():
        raise FileNotFoundError(f"No such file: {path}")
    if fmt == "auto":
        fmt = "jsonl" if path.suffix in {".jsonl", ".json"} else "tsv"
    if fmt == "jsonl":
        return read_jsonl_pairs(path)
    if fmt == "tsv":
        return read_tsv_pairs(path, **options)
    if fmt == "cad-sentiment":
        return read_cad_sentiment(path)
    raise PairFormatError(f"Unknown pair format {fmt!r}; choose jsonl, tsv or cad-sentiment.")
