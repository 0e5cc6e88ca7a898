"""Batched decoding of many prompts at once: left padding, sampling or beams, OOM back-off."""

import copy
import inspect
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

from generation.constraints import RuleLogitsProcessor, token_texts, writing_rule
from generation.tokens import ANSWER

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecodingConfig:
    do_sample: bool = True  # sampling (Polyjuice's default) or beam search
    temperature: float = 1.0
    top_p: float = 0.9
    top_k: int = 50  # transformers' default, which polyjuice-nlp sampled with
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
    ids = {token_id for token_id, text in enumerate(token_texts(tokenizer)) if "\n" in text}
    tokenizer._cfannotate_newline_ids = ids
    return ids


def _supports_logits_to_keep(model) -> bool:
    return "logits_to_keep" in inspect.signature(model.forward).parameters


@dataclass(frozen=True)
class PromptParts:
    """A prompt in three parts, so that what prompts share is computed once.

    `shared` is the same for a whole group (few-shot examples), `context` for the
    prompts of one original (`x <|perturb|>`), `own` is this prompt's ending
    (`[code] blanked [SEP]`). The prompt is their concatenation.
    """

    shared: str
    context: str
    own: str

    @property
    def text(self) -> str:
        return self.shared + self.context + self.own


def _splits_cleanly(tokenizer, parts: PromptParts) -> bool:
    """True when tokenizing the parts apart gives the tokens of the whole prompt."""
    pieces = [piece for piece in (parts.shared, parts.context, parts.own) if piece]
    apart = [i for piece in pieces for i in tokenizer(piece, add_special_tokens=False)["input_ids"]]
    return apart == tokenizer(parts.text, add_special_tokens=False)["input_ids"]


@torch.inference_mode()
def _shared_cache(lm, shared: str):
    """The key/value cache of a group's shared text, computed once (batch of one)."""
    ids = lm.tokenizer(shared, add_special_tokens=False, return_tensors="pt")["input_ids"]
    ids = ids.to(lm.device)  # (1, shared_len)
    step = {"logits_to_keep": 1} if _supports_logits_to_keep(lm.model) else {}
    cache = lm.model(input_ids=ids, use_cache=True, **step).cache
    return ids, cache


def _left_padded(tokenizer, texts: list[str], device) -> tuple[torch.Tensor, torch.Tensor]:
    encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    return encoded["input_ids"].to(device), encoded["attention_mask"].to(device)


@torch.inference_mode()
def _prompt_cache(lm, parts: list[PromptParts], shared, copies: int):
    """Inputs and a key/value cache holding all but the last token of each prompt.

    Rows read [shared][padding][context][padding][own]. The shared part comes from
    `shared` (ids and cache, computed once per group); each distinct context is
    prefilled once and its cache rows copied to the prompts that use it; then each
    prompt's own part is prefilled. Padding is masked and position ids count real
    tokens only. Each row is finally repeated `copies` times, so a prompt is
    prefilled once however many sequences are sampled from it.
    Returns (input_ids, attention_mask, cache) with len(parts) * copies rows.
    """
    model, tokenizer, device = lm.model, lm.tokenizer, lm.device
    step = {"logits_to_keep": 1} if _supports_logits_to_keep(model) else {}
    contexts = list(dict.fromkeys(part.context for part in parts))
    context_of = torch.tensor([contexts.index(part.context) for part in parts], device=device)

    # 1. The shared part, repeated for every distinct context.
    if shared is not None:
        shared_ids, shared_kv = shared  # (1, shared_len), batch-1 cache
        ids = shared_ids.expand(len(contexts), -1)
        mask = torch.ones_like(ids)
        cache = copy.deepcopy(shared_kv)
        cache.batch_repeat_interleave(len(contexts))
    else:
        ids = torch.empty((len(contexts), 0), dtype=torch.long, device=device)
        mask, cache = ids.clone(), None
    start = ids.shape[1]

    # 2. Each distinct context once, on top of the shared part.
    if any(contexts):
        context_ids, context_mask = _left_padded(tokenizer, contexts, device)
        ids = torch.cat([ids, context_ids], dim=1)  # (contexts, shared + context_len)
        mask = torch.cat([mask, context_mask], dim=1)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        cache = model(
            input_ids=context_ids,
            attention_mask=mask,
            position_ids=positions[:, start:],
            cache=cache,
            use_cache=True,
            **step,
        ).cache
        start = ids.shape[1]

    # 3. Every prompt's own part, on a copy of its context's cache rows.
    own_ids, own_mask = _left_padded(tokenizer, [part.own for part in parts], device)
    ids = torch.cat([ids[context_of], own_ids], dim=1)  # (prompts, prompt_len)
    mask = torch.cat([mask[context_of], own_mask], dim=1)
    if cache is not None:
        cache.batch_select_indices(context_of)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    if ids.shape[1] - 1 > start:
        cache = model(
            input_ids=ids[:, start:-1],
            attention_mask=mask[:, :-1],
            position_ids=positions[:, start:-1],
            cache=cache,
            use_cache=True,
            **step,
        ).cache
    if copies > 1:
        ids = ids.repeat_interleave(copies, dim=0)  # (prompts * copies, prompt_len)
        mask = mask.repeat_interleave(copies, dim=0)
        if cache is not None:
            cache.batch_repeat_interleave(copies)
    return ids, mask, cache


def _bracket_closers(tokenizer) -> torch.Tensor:
    """A vocabulary mask of tokens holding "]", the last character of an [ANSWER] marker."""
    cached = getattr(tokenizer, "_cfannotate_bracket_mask", None)
    if cached is None:
        tokens = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        cached = torch.tensor(["]" in (token or "") for token in tokens], dtype=torch.bool)
        tokenizer._cfannotate_bracket_mask = cached
    return cached


def eos_token_ids(lm) -> set[int]:
    """The ids that end a text: the tokenizer's end-of-text and the model's configured ones."""
    ids = {lm.tokenizer.eos_token_id}
    configured = getattr(lm.model.generation_config, "eos_token_id", None)
    ids |= set(configured) if isinstance(configured, list) else {configured}
    return {token for token in ids if token is not None}


def _pick_tokens(logits: torch.Tensor, config: DecodingConfig, generator) -> torch.Tensor:
    """Next token per row: argmax, or a top-k then top-p sample at the temperature."""
    if not config.do_sample:
        return logits.argmax(-1)
    logits = logits / config.temperature  # (rows, vocab), float32
    # Top-k first: sorting k candidates instead of the whole vocabulary.
    k = config.top_k if 0 < config.top_k < logits.shape[-1] else logits.shape[-1]
    ordered, order = logits.topk(k, dim=-1)  # (rows, k), descending
    if config.top_p < 1.0:
        probs = ordered.softmax(-1)
        # Keep the smallest prefix whose mass reaches top_p (the top token always stays).
        outside = (probs.cumsum(-1) - probs) > config.top_p
        ordered = ordered.masked_fill(outside, float("-inf"))
    choice = torch.multinomial(ordered.softmax(-1), 1, generator=generator)  # (rows, 1)
    return order.gather(-1, choice).squeeze(-1)


@torch.inference_mode()
def _decode_rows(
    lm,
    input_ids,
    attention_mask,
    cache,
    limits: list[int],
    config: DecodingConfig,
    needed: list[int],
    newline_ids: set[int],
    generator,
) -> list[str]:
    """Sample or argmax continuations, one token per step for every live row.

    Each row may write only what the format allows (`generation.constraints`): its
    marker state masks the logits before a token is picked. A row leaves the batch as
    soon as it is finished (end of text, a newline when asked, its `needed` [ANSWER]
    markers, or `limits[row]` tokens), and its cache rows are dropped, so a batch costs
    what its live rows cost, not what its slowest row costs.
    """
    model, tokenizer = lm.model, lm.tokenizer
    rows = input_ids.shape[0]
    eos_ids = eos_token_ids(lm)
    rule = writing_rule(tokenizer, frozenset(eos_ids)).to(input_ids.device)
    states = torch.zeros(rows, dtype=torch.long, device=input_ids.device)  # outside any marker
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
    for _ in range(max(limits)):
        output = model(
            input_ids=current,
            attention_mask=mask,
            position_ids=position,
            cache=cache,
            use_cache=True,
            **step_kwargs,
        )
        cache = output.cache
        logits = output.logits[:, -1, :].float()  # (live, vocab)
        logits = logits.masked_fill(~rule.allowed(states, logits.shape[-1]), float("-inf"))
        chosen = _pick_tokens(logits, config, generator)  # (live,)
        states = rule.step(states, chosen)
        finished = torch.zeros_like(chosen, dtype=torch.bool)
        for index, (row, token) in enumerate(zip(live.tolist(), chosen.tolist(), strict=True)):
            if token in eos_ids:
                finished[index] = True
                continue
            tokens[row].append(token)
            if newline[token] or len(tokens[row]) >= limits[row]:
                finished[index] = True
            elif needed[row] and closers[token]:
                text = tokenizer.decode(tokens[row], skip_special_tokens=False)
                finished[index] = text.count(ANSWER) >= needed[row]
        if finished.all():
            break
        if finished.any():
            keep = (~finished).nonzero().squeeze(-1)
            cache.batch_select_indices(keep)
            live, chosen, states = live[keep.cpu()], chosen[keep], states[keep]
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
        logits_processor=LogitsProcessorList(
            [
                RuleLogitsProcessor(
                    writing_rule(tokenizer, frozenset(eos_token_ids(lm))), prompt_length
                )
            ]
        ),
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
    parts: list[PromptParts],
    budgets: list[int],
    config: DecodingConfig,
    newline_ids: set[int],
    needed: list[int],
    *,
    shared=None,
    generator=None,
) -> list[list[str]]:
    """`config.per_prompt` continuations of each prompt."""
    per = config.per_prompt
    if config.num_beams > 1:
        # generate() expands and scores beams itself, from the full prompts.
        texts = _generate_beams(
            lm, [part.text for part in parts], max(budgets), config, newline_ids, needed
        )
    else:
        # Greedy decoding gives one continuation per prompt, repeated; sampling draws
        # `per` of them from one prefill.
        copies = per if config.do_sample else 1
        input_ids, attention_mask, cache = _prompt_cache(lm, parts, shared, copies)
        rows_needed = [count for count in needed for _ in range(copies)]
        texts = _decode_rows(
            lm,
            input_ids,
            attention_mask,
            cache,
            [budget for budget in budgets for _ in range(copies)],
            config,
            rows_needed,
            newline_ids,
            generator,
        )
        if copies == 1:
            texts = [text for text in texts for _ in range(per)]
    return [texts[index * per : (index + 1) * per] for index in range(len(parts))]


def generate_continuations(
    lm,
    prompts: list[str | PromptParts],
    max_new_tokens: list[int],
    config: DecodingConfig,
    *,
    answers_needed: list[int] | None = None,
    stop_at_newline: bool = False,
    progress: Callable[[int], None] | None = None,
    on_result: Callable[[int, list[str]], None] | None = None,
) -> list[list[str]]:
    """`config.per_prompt` continuations for every prompt, in prompt order.

    Prompts given as `PromptParts` share work: the shared part is computed once per
    group, each context once per batch (prompts are batched by group, then by
    context, then by length). A part that would tokenize differently on its own is
    folded back into the prompt. A row stops at its end-of-text token, at a newline
    (with `stop_at_newline`) or after `answers_needed[i]` [ANSWER] markers, and
    decodes at most `max_new_tokens[i]` tokens. On CUDA an out-of-memory error
    halves the batch and retries; on CPU errors propagate. `on_result(i, texts)` is
    called for each prompt as soon as its batch is done.
    """
    if not prompts:
        return []
    generator = torch.Generator(device=lm.device)
    if config.seed is not None:
        generator.manual_seed(config.seed)
    else:
        generator.seed()
    parts = [_clean_parts(lm.tokenizer, prompt, config) for prompt in prompts]
    newline_ids = newline_token_ids(lm.tokenizer) if stop_at_newline else set()
    answers_needed = answers_needed or [0] * len(prompts)
    own_lengths = [
        len(ids)
        for ids in lm.tokenizer([p.own for p in parts], add_special_tokens=False)["input_ids"]
    ]
    results: list[list[str] | None] = [None] * len(prompts)
    batch_size = max(1, config.batch_size)
    for shared in dict.fromkeys(part.shared for part in parts):
        members = sorted(
            (i for i, part in enumerate(parts) if part.shared == shared),
            key=lambda i: (parts[i].context, own_lengths[i]),
        )
        cached = _shared_cache(lm, shared) if shared else None
        position = 0
        while position < len(members):
            indices = members[position : position + batch_size]
            try:
                batch = _generate_batch(
                    lm,
                    [parts[i] for i in indices],
                    [max_new_tokens[i] for i in indices],
                    config,
                    newline_ids,
                    [answers_needed[i] for i in indices],
                    shared=cached,
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
                if on_result:
                    on_result(index, continuations)
            position += len(indices)
            if progress:
                progress(len(indices))
    return [continuations or [] for continuations in results]


def _clean_parts(tokenizer, prompt: str | PromptParts, config: DecodingConfig) -> PromptParts:
    """The prompt as parts that are safe to compute apart (beam search takes it whole)."""
    if isinstance(prompt, str):
        return PromptParts("", "", prompt)
    if config.num_beams > 1 or not _splits_cleanly(tokenizer, prompt):
        return PromptParts("", "", prompt.text)
    return prompt
