"""Scores fluency: log-probability deltas between x̂ and x on the whole sentence and the changed phrase (Polyjuice §3.2)."""  # noqa: E501

import logging
from dataclasses import dataclass

import torch

from generation.models import LoadedModel

logger = logging.getLogger(__name__)

Span = tuple[int, int]  # [start, end) character offsets into a text

# Logits are (batch, length, vocab); with a 50k vocabulary in fp32 that is 200 KB per token, so
# a batch is also capped by its padded token count to keep CPU memory near 1 GB.
_MAX_BATCH_TOKENS = 4096


@dataclass(frozen=True)
class FluencyItem:
    """A candidate x̂ of an original x, with the phrase each edit op changed."""

    original: str  # x
    candidate: str  # x̂
    # Per edit op: (char span in x, char span in x̂) of the changed phrase; an empty span is a
    # pure insertion (on the x side) or deletion (on the x̂ side).
    phrases: tuple[tuple[Span, Span], ...] = ()


@dataclass(frozen=True)
class FluencyScore:
    """How much less likely x̂ is than x under the LM, in nats."""

    full: float  # log p(x̂) - log p(x) over the whole sentence; negative = x̂ less fluent
    changed: float | None  # worst op's log p(x̂ phrase) - log p(x phrase); None without phrases

    def passes(self, threshold: float) -> bool:
        """False when either delta falls more than `threshold` below zero (Polyjuice uses 10)."""
        if self.full < -threshold:
            return False
        return self.changed is None or self.changed >= -threshold


@dataclass(frozen=True)
class _Encoded:
    ids: list[int]  # start token, then the text's tokens
    offsets: list[Span]  # char span of each text token (not the start token)


def sentence_token_logprobs(
    lm: LoadedModel, texts: list[str], *, batch_size: int = 64
) -> list[tuple[torch.Tensor, list[Span]]]:
    """Per text: each token's log-prob given the ones before it (fp32, CPU) and its char span."""
    encoded = [_encode(lm, text) for text in texts]
    scores: list[torch.Tensor | None] = [None] * len(texts)
    # Longest first so each batch pads little and an out-of-memory error shows up on batch one.
    order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids), reverse=True)
    position, size = 0, max(1, batch_size)
    while position < len(order):
        longest = len(encoded[order[position]].ids)
        chunk = order[position : position + max(1, min(size, _MAX_BATCH_TOKENS // longest))]
        try:
            batch_scores = _score_batch(lm, [encoded[i].ids for i in chunk])
        except torch.cuda.OutOfMemoryError:
            if lm.device.type != "cuda" or len(chunk) == 1:
                raise
            size = max(1, len(chunk) // 2)
            logger.warning("GPU out of memory on %d texts; retrying %d at a time", len(chunk), size)
            torch.cuda.empty_cache()
            continue
        for index, score in zip(chunk, batch_scores, strict=True):
            scores[index] = score
        position += len(chunk)
    return [
        (score, enc.offsets)
        for score, enc in zip(scores, encoded, strict=True)
        if score is not None
    ]


def sentence_logprobs(lm: LoadedModel, texts: list[str], *, batch_size: int = 64) -> list[float]:
    """Per text: log p(text | start token), the sum of its token log-probs."""
    scored = sentence_token_logprobs(lm, texts, batch_size=batch_size)
    return [float(logprobs.sum()) for logprobs, _ in scored]


def fluency_scores(
    lm: LoadedModel, items: list[FluencyItem], *, batch_size: int = 64
) -> list[FluencyScore]:
    """Whole-sentence and changed-phrase log-prob deltas of each x̂ against its x."""
    # Many candidates share one original: score every distinct text once.
    texts = list(dict.fromkeys(text for item in items for text in (item.original, item.candidate)))
    scored = dict(
        zip(texts, sentence_token_logprobs(lm, texts, batch_size=batch_size), strict=True)
    )
    results = []
    for item in items:
        original, candidate = scored[item.original], scored[item.candidate]
        full = float(candidate[0].sum() - original[0].sum())
        deltas = [
            _phrase_logprob(*candidate, item.candidate, new)
            - _phrase_logprob(*original, item.original, old)
            for old, new in item.phrases
        ]
        results.append(FluencyScore(full=full, changed=min(deltas) if deltas else None))
    return results


# Why a candidate the fluency model cannot read whole is dropped (postprocess).
TOO_LONG = "too_long"


def readable(lm: LoadedModel, texts: list[str]) -> list[bool]:
    """Per text: whether the LM reads all of it after its start token (`_encode` refuses
    the others). Candidates that do not fit are dropped as `too_long`, not scored."""
    limit = getattr(lm.model.config, "max_position_embeddings", None)
    if limit is None or not texts:
        return [True] * len(texts)
    counts = lm.tokenizer(texts, add_special_tokens=False)["input_ids"]
    return [len(ids) + 1 <= limit for ids in counts]


def _encode(lm: LoadedModel, text: str) -> _Encoded:
    tokenizer = lm.tokenizer
    # The start token is added here, never by the tokenizer, so scores do not change with a
    # tokenizer version's add_bos_token default; GPT-2 style models start from eos instead.
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    if start is None:
        raise ValueError(f"The tokenizer of {lm.name!r} has neither a bos nor an eos token.")
    if not tokenizer.is_fast:
        raise ValueError(f"The tokenizer of {lm.name!r} gives no char offsets; use a fast one.")
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    limit = getattr(lm.model.config, "max_position_embeddings", None)
    if limit is not None and len(encoding["input_ids"]) + 1 > limit:
        raise ValueError(
            f"A text of {len(encoding['input_ids'])} tokens is longer than {lm.name!r} reads "
            f"({limit - 1} after the start token): {text[:60]!r}..."
        )
    offsets = [(int(first), int(last)) for first, last in encoding["offset_mapping"]]
    return _Encoded(ids=[start, *encoding["input_ids"]], offsets=offsets)


@torch.inference_mode()
def _score_batch(lm: LoadedModel, sequences: list[list[int]]) -> list[torch.Tensor]:
    """Log-probs of tokens 1.. of each sequence, right-padded so positions match unbatched runs."""
    longest = max(len(ids) for ids in sequences)
    if longest == 1:  # only start tokens: empty texts have nothing to score
        return [torch.zeros(0) for _ in sequences]
    pad = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    input_ids = torch.full((len(sequences), longest), pad, dtype=torch.long)  # (B, L)
    attention_mask = torch.zeros((len(sequences), longest), dtype=torch.long)  # (B, L)
    for row, ids in enumerate(sequences):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        attention_mask[row, : len(ids)] = 1
    input_ids, attention_mask = input_ids.to(lm.device), attention_mask.to(lm.device)
    # Right padding leaves every real token at the position it has alone, and causal attention
    # never lets it see the pads after it, so batching cannot change a score.
    logits = lm.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
    results = []
    for row, ids in enumerate(sequences):
        # Row by row keeps the fp32 copy to one sequence; log-softmax in fp32 even under bf16.
        row_logits = logits[row, : len(ids) - 1].float()  # (n-1, V): predicts tokens 1..n-1
        targets = input_ids[row, 1 : len(ids)].unsqueeze(-1)  # (n-1, 1)
        logprobs = row_logits.log_softmax(dim=-1).gather(-1, targets).squeeze(-1)  # (n-1,)
        results.append(logprobs.cpu())
    return results


def _phrase_logprob(logprobs: torch.Tensor, offsets: list[Span], text: str, span: Span) -> float:
    """Sum of the log-probs of tokens whose char span overlaps `span`; 0.0 for an empty span."""
    start, end = span
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"Phrase span {span} lies outside a text of {len(text)} chars: {text!r}")
    if start == end:
        return 0.0
    chosen = [k for k, (first, last) in enumerate(offsets) if first < end and last > start]
    return float(logprobs[chosen].sum())
