"""Batched decoding of many prompts at once: left padding, sampling or beams, OOM back-off."""

import copy
import inspect
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from transformers import StoppingCriteria, StoppingCriteriaList

from generation.tokens import ANSWER

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecodingConfig:
    do_sample: bool = True  # sampling (Polyjuice's default) or beam search
    temperature: float = 1.0
    top_p: float = 0.9
    num_beams: int = 1  # > 1 selects beam search (A.3.1 used beam = 10)
    per_prompt: int = 3  # continuations returned per prompt
    batch_size: int = 32  # prompts per forward pass; halved on CUDA OOM
    max_new_tokens_factor: float = 1.5  # new tokens allowed per token of the original
    max_new_tokens_extra: int = 8
    max_new_tokens_cap: int = 160
    seed: int | None = 0

    def __post_init__(self) -> None:
        if self.per_prompt < 1:
            raise ValueError("per_prompt must be at least 1.")
        if self.num_beams > 1 and self.per_prompt > self.num_beams:
            raise ValueError(
                f"Beam search returns at most num_beams sequences: per_prompt={self.per_prompt} "
                f"> num_beams={self.num_beams}."
            )
        if self.do_sample and not 0 < self.top_p <= 1:
            raise ValueError("top_p must be in (0, 1].")
        if self.temperature <= 0:
            raise ValueError("temperature must be positive.")

    def max_new_tokens(self, original_tokens: int) -> int:
        wanted = math.ceil(self.max_new_tokens_factor * original_tokens) + self.max_new_tokens_extra
        return max(4, min(self.max_new_tokens_cap, wanted))


class StopWhenAnswered(StoppingCriteria):
    """Marks a row finished once its answer is complete, so a batch ends with its slowest row.

    A row is complete when it wrote a newline (few-shot prompts end an example
    there) or as many [ANSWER] markers as its prompt has blanks; `needed[row]` of 0
    means only the newline counts. Finished rows are padded by generate().
    """

    def __init__(self, tokenizer, prompt_length: int, needed: list[int], newline_ids: set[int]):
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length
        self.needed = needed
        self.newline_ids = torch.tensor(sorted(newline_ids), dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores, **kwargs) -> torch.BoolTensor:
        new = input_ids[:, self.prompt_length :]  # (rows, generated)
        done = torch.zeros(new.shape[0], dtype=torch.bool, device=new.device)
        if len(self.newline_ids):
            done |= torch.isin(new, self.newline_ids.to(new.device)).any(dim=1)
        if any(self.needed):
            texts = self.tokenizer.batch_decode(new, skip_special_tokens=False)
            answered = [
                bool(needed) and text.count(ANSWER) >= needed
                for text, needed in zip(texts, self.needed, strict=True)
            ]
            done |= torch.tensor(answered, device=new.device)
        return done


def newline_token_ids(tokenizer) -> set[int]:
    """Every vocabulary id whose text contains a newline (few-shot prompts end examples there)."""
    cached = getattr(tokenizer, "_cfannotate_newline_ids", None)
    if cached is not None:
        return cached
    ids = {
        token_id
        for token_id in range(len(tokenizer))
        if "\n" in tokenizer.decode([token_id], skip_special_tokens=False)
    }
    tokenizer._cfannotate_newline_ids = ids
    return ids


def _supports_logits_to_keep(model) -> bool:
    return "logits_to_keep" in inspect.signature(model.forward).parameters


@torch.inference_mode()
def _prefix_cache(lm, prefix: str):
    """The key/value cache of a prompt prefix shared by many prompts (few-shot examples)."""
    ids = lm.tokenizer(prefix, add_special_tokens=False, return_tensors="pt")["input_ids"]
    ids = ids.to(lm.device)  # (1, prefix_len)
    extra = {"logits_to_keep": 1} if _supports_logits_to_keep(lm.model) else {}
    cache = lm.model(input_ids=ids, use_cache=True, **extra).past_key_values
    return ids, cache


@torch.inference_mode()
def _prompt_cache(lm, queries: list[str], prefix, copies: int):
    """Inputs and a key/value cache holding all but the last token of each prompt.

    Rows read [prefix][padding][query]: the shared prefix comes from `prefix` (its ids
    and cache, computed once), the padding is masked out, and position ids count
    only real tokens. Each row is repeated `copies` times after the prefill, so a
    prompt is prefilled once however many sequences are sampled from it.
    Returns (input_ids, attention_mask, cache), with rows * copies rows.
    """
    model = lm.model
    encoded = lm.tokenizer(queries, return_tensors="pt", padding=True, add_special_tokens=False)
    input_ids = encoded["input_ids"].to(lm.device)  # (rows, query_len), left padded
    attention_mask = encoded["attention_mask"].to(lm.device)
    rows = len(queries)
    start, cache = 0, None
    if prefix is not None:
        prefix_ids, prefix_kv = prefix  # (1, prefix_len), cache of batch 1
        start = prefix_ids.shape[1]
        input_ids = torch.cat([prefix_ids.expand(rows, -1), input_ids], dim=1)
        attention_mask = torch.cat(
            [torch.ones_like(prefix_ids).expand(rows, -1), attention_mask], dim=1
        )
        cache = copy.deepcopy(prefix_kv)
        cache.batch_repeat_interleave(rows)
    positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    if input_ids.shape[1] - 1 > start:
        step = {"logits_to_keep": 1} if _supports_logits_to_keep(model) else {}
        cache = model(
            input_ids=input_ids[:, start:-1],
            attention_mask=attention_mask[:, :-1],
            position_ids=positions[:, start:-1],
            past_key_values=cache,
            use_cache=True,
            **step,
        ).past_key_values
    if copies > 1:
        input_ids = input_ids.repeat_interleave(copies, dim=0)  # (rows * copies, prompt_len)
        attention_mask = attention_mask.repeat_interleave(copies, dim=0)
        if cache is not None:
            cache.batch_repeat_interleave(copies)
    return input_ids, attention_mask, cache


def _bracket_closers(tokenizer) -> torch.Tensor:
    """A vocabulary mask of tokens holding "]", the last character of an [ANSWER] marker."""
    cached = getattr(tokenizer, "_cfannotate_bracket_mask", None)
    if cached is None:
        tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        cached = torch.tensor(["]" in (token or "") for token in tokens], dtype=torch.bool)
        tokenizer._cfannotate_bracket_mask = cached
    return cached


def _eos_ids(lm) -> set[int]:
    ids = {lm.tokenizer.eos_token_id}
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    ids |= set(configured) if isinstance(configured, list) else {configured}
    return {token for token in ids if token is not None}


def _pick_tokens(logits: torch.Tensor, config: DecodingConfig, generator) -> torch.Tensor:
    """Next token per row: argmax, or a nucleus (top-p) sample at the temperature."""
    if not config.do_sample:
        return logits.argmax(-1)
    logits = logits / config.temperature  # (rows, vocab), float32
    if config.top_p < 1.0:
        ordered, order = logits.sort(dim=-1, descending=True)
        probs = ordered.softmax(-1)
        # Keep the smallest prefix whose mass reaches top_p (the top token always stays).
        outside = (probs.cumsum(-1) - probs) > config.top_p
        ordered = ordered.masked_fill(outside, float("-inf"))
        logits = torch.full_like(logits, float("-inf")).scatter(-1, order, ordered)
    return torch.multinomial(logits.softmax(-1), 1, generator=generator).squeeze(-1)


@torch.inference_mode()
def _decode_rows(
    lm,
    input_ids,
    attention_mask,
    cache,
    max_new_tokens: int,
    config: DecodingConfig,
    needed: list[int],
    newline_ids: set[int],
    generator,
) -> list[str]:
    """Sample or argmax continuations, one token per step for every live row.

    A row leaves the batch as soon as it is finished (end of text, a newline when
    asked, or its `needed` [ANSWER] markers), and its cache rows are dropped, so a
    batch costs what its live rows cost, not what its slowest row costs.
    """
    model, tokenizer = lm.model, lm.tokenizer
    rows = input_ids.shape[0]
    eos_ids = _eos_ids(lm)
    closers = _bracket_closers(tokenizer).to(input_ids.device)
    newline = torch.zeros_like(closers)
    if newline_ids:
        newline[list(newline_ids)] = True
    step_kwargs = {"logits_to_keep": 1} if _supports_logits_to_keep(model) else {}
    live = torch.arange(rows)  # original row of each live row
    tokens: list[list[int]] = [[] for _ in range(rows)]
    current = input_ids[:, -1:]  # (live, 1)
    position = attention_mask.sum(-1, keepdim=True) - 1  # (live, 1), real tokens only
    mask = attention_mask
    for _ in range(max_new_tokens):
        output = model(
            input_ids=current,
            attention_mask=mask,
            position_ids=position,
            past_key_values=cache,
            use_cache=True,
            **step_kwargs,
        )
        cache = output.past_key_values
        chosen = _pick_tokens(output.logits[:, -1, :].float(), config, generator)  # (live,)
        finished = torch.zeros_like(chosen, dtype=torch.bool)
        for index, (row, token) in enumerate(zip(live.tolist(), chosen.tolist(), strict=True)):
            if token in eos_ids:
                finished[index] = True
                continue
            tokens[row].append(token)
            if newline[token]:
                finished[index] = True
            elif needed[row] and closers[token]:
                text = tokenizer.decode(tokens[row], skip_special_tokens=False)
                finished[index] = text.count(ANSWER) >= needed[row]
        if finished.all():
            break
        if finished.any():
            keep = (~finished).nonzero().squeeze(-1)
            cache.batch_select_indices(keep)
            live, chosen = live[keep.cpu()], chosen[keep]
            mask, position = mask[keep], position[keep]
        current = chosen.unsqueeze(-1)
        mask = torch.cat([mask, torch.ones_like(current)], dim=-1)
        position = position + 1
    return [tokenizer.decode(row_tokens, skip_special_tokens=False) for row_tokens in tokens]


@torch.inference_mode()
def _generate_beams(
    lm,
    queries: list[str],
    max_new_tokens: int,
    config: DecodingConfig,
    newline_ids: set[int],
    needed: list[int],
) -> list[str]:
    """Beam search through generate(), which expands and scores the beams itself."""
    tokenizer = lm.tokenizer
    encoded = tokenizer(queries, return_tensors="pt", padding=True, add_special_tokens=False)
    input_ids = encoded["input_ids"].to(lm.device)
    prompt_length = input_ids.shape[1]
    rows_needed = [count for count in needed for _ in range(config.per_prompt)]
    output = lm.model.generate(
        input_ids=input_ids,
        attention_mask=encoded["attention_mask"].to(lm.device),
        max_new_tokens=max_new_tokens,
        do_sample=False,
        num_beams=config.num_beams,
        num_return_sequences=config.per_prompt,
        early_stopping=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        stopping_criteria=StoppingCriteriaList(
            [StopWhenAnswered(tokenizer, prompt_length, rows_needed, newline_ids)]
        ),
    )  # (rows * per, prompt_len + new)
    texts = tokenizer.batch_decode(output[:, prompt_length:], skip_special_tokens=False)
    cleaned = []
    for text in texts:
        for marker in (tokenizer.eos_token, tokenizer.pad_token):
            if marker and marker in text:
                text = text.split(marker, 1)[0]
        cleaned.append(text)
    return cleaned


def _generate_batch(
    lm,
    queries: list[str],
    max_new_tokens: int,
    config: DecodingConfig,
    newline_ids: set[int],
    needed: list[int],
    *,
    prefix=None,
    generator=None,
) -> list[list[str]]:
    """`config.per_prompt` continuations of `prefix + query` for each query."""
    per = config.per_prompt
    if config.num_beams > 1:
        # The caller passes full prompts here: generate() cannot reuse a prefix cache
        # across beams.
        texts = _generate_beams(lm, queries, max_new_tokens, config, newline_ids, needed)
    else:
        # Greedy decoding gives one continuation per prompt, repeated; sampling draws
        # `per` of them from one prefill.
        copies = per if config.do_sample else 1
        input_ids, attention_mask, cache = _prompt_cache(lm, queries, prefix, copies)
        rows_needed = [count for count in needed for _ in range(copies)]
        texts = _decode_rows(
            lm,
            input_ids,
            attention_mask,
            cache,
            max_new_tokens,
            config,
            rows_needed,
            newline_ids,
            generator,
        )
        if copies == 1:
            texts = [text for text in texts for _ in range(per)]
    return [texts[index * per : (index + 1) * per] for index in range(len(queries))]


def generate_continuations(
    lm,
    prompts: list[str],
    max_new_tokens: list[int],
    config: DecodingConfig,
    *,
    prefixes: list[str] | None = None,
    answers_needed: list[int] | None = None,
    stop_at_newline: bool = False,
    progress: Callable[[int], None] | None = None,
) -> list[list[str]]:
    """`config.per_prompt` continuations for every prompt, in prompt order.

    With `prefixes`, prompt i reads `prefixes[i] + prompts[i]`; prompts sharing a
    prefix are batched together and the prefix is computed once. A row stops at a
    newline (with `stop_at_newline`) or after `answers_needed[i]` [ANSWER] markers.
    Prompts are sorted by length so each batch pads little, and each batch decodes up
    to the largest
    `max_new_tokens` of its prompts. On CUDA an out-of-memory error halves the batch
    and retries; on CPU errors propagate.
    """
    if not prompts:
        return []
    generator = torch.Generator(device=lm.device)
    if config.seed is not None:
        generator.manual_seed(config.seed)
    else:
        generator.seed()
    prefixes = prefixes or [""] * len(prompts)
    newline_ids = newline_token_ids(lm.tokenizer) if stop_at_newline else set()
    answers_needed = answers_needed or [0] * len(prompts)
    lengths = [len(ids) for ids in lm.tokenizer(prompts, add_special_tokens=False)["input_ids"]]
    results: list[list[str] | None] = [None] * len(prompts)
    batch_size = max(1, config.batch_size)
    for prefix in dict.fromkeys(prefixes):
        members = sorted(
            (i for i, p in enumerate(prefixes) if p == prefix), key=lambda index: lengths[index]
        )
        cached = _prefix_cache(lm, prefix) if prefix and config.num_beams == 1 else None
        position = 0
        while position < len(members):
            indices = members[position : position + batch_size]
            queries = [prompts[i] if cached is not None else prefix + prompts[i] for i in indices]
            try:
                batch = _generate_batch(
                    lm,
                    queries,
                    max(max_new_tokens[i] for i in indices),
                    config,
                    newline_ids,
                    [answers_needed[i] for i in indices],
                    prefix=cached,
                    generator=generator,
                )
            except torch.cuda.OutOfMemoryError:
                if batch_size == 1:
                    raise
                torch.cuda.empty_cache()
                batch_size = max(1, batch_size // 2)
                logger.warning(
                    "CUDA out of memory; retrying with batches of %d prompts", batch_size
                )
                continue
            for index, continuations in zip(indices, batch, strict=True):
                results[index] = continuations
            position += len(indices)
            if progress:
                progress(len(indices))
    return [continuations or [] for continuations in results]
