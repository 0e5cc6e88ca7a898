"""transformers' continuous batching behind the engine interface.

Every prompt becomes a request to transformers' `ContinuousBatchingManager`: paged
attention over a block cache, a request's rows replaced by waiting ones as soon as
they finish, prompt blocks shared between requests with the same prefix (the few-shot
examples, an original's context). Our stop rules map onto its
own: end of text and (for few-shot prompts) every newline token are end-of-sequence
ids of the request, and each request has its own token budget. A request that must
stop after its N-th [ANSWER] marker runs to its budget and is cut there afterwards,
which gives the text an early stop would have given.

What the model may write (`generation.constraints`) is a per-row automaton. Continuous
batching builds its processors from the generation config, which carries the static part
(`suppress_tokens`: every id banned in every state, which the engine applies as one masked
fill, `BannedIdsMask`, that CUDA graphs can capture); the engine adds the rest before the
manager starts (`WritingRuleProcessor`: each request's state, read from the tokens it
has written, masks its next token), so a marker spelt over several tokens (`[`, `E`, `Q`,
`]`) cannot be written either. Before, one prompt in three of the benchmark's broke the
rule that way and was decoded a second time by our loop. Where the state cannot be read
on the host (asynchronous batching, whose last token is still on the device), only the
static part applies. Either way a continuation that breaks the rule is decoded again,
whole prompt, by our loop, which enforces all of it: greedy text is then the loop's, as
the engine contract wants, and no engine hands such text on.

Attention is packed (`generation.engines.varlen_attention`: each request over its own
cache, PyTorch's flash kernel on CUDA) rather than transformers' `sdpa`, which masks every
request of a step against every other's cache; `sdpa` stays for models whose attention
packed attention does not do, and for comparison.

Beam search is not continuous batching's to do: `num_beams > 1` goes through our loop.
"""

import logging
from contextlib import contextmanager, nullcontext

import psutil
import torch
from transformers import GenerationConfig
from transformers.generation.configuration_utils import ContinuousBatchingConfig
from transformers.generation.continuous_batching.cb_logits_processors import (
    ContinuousBatchingLogitsProcessor,
)
from transformers.generation.continuous_batching.utils import WorkloadHints
from transformers.generation.logits_process import LogitsProcessor, SuppressTokensLogitsProcessor

from generation.constraints import BANNED, WritingRule, breaks_format, writing_rule
from generation.decoding import (
    DecodingConfig,
    PromptParts,
    eos_token_ids,
    generate_continuations,
    newline_token_ids,
)
from generation.engines import varlen_attention
from generation.engines.base import ResultHook
from generation.tokens import ANSWER

logger = logging.getLogger(__name__)


class _KnownProcessorNotice(logging.Filter):
    """Drops transformers' notice that the suppress-tokens processor "might not be supported
    by CB": it only masks columns of the logits, and a test shows continuous batching
    applies it (tests/generation/test_constraints.py). Other notices pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("SuppressTokensLogitsProcessor" in message and "might not be" in message)


logging.getLogger("ContinuousBatchingLogger").addFilter(_KnownProcessorNotice())

# How long to wait for one result before checking that the generation thread lives.
POLL_SECONDS = 1.0
# On CPU the paged cache is sized for the workload in pages of this many tokens, and a
# step takes at most this many tokens (prefill chunks included).
CPU_PAGE_SIZE = 64
CPU_MAX_BATCH_TOKENS = 1024
# Without a paged-attention kernel (`paged|sdpa`), each query attends over the cache of
# every request in the batch, masked, so a step costs (requests) x (their cache): on CPU,
# 16 requests at a time decoded the benchmark's prompts 2.5x faster than no cap.
CPU_MAX_REQUESTS_PER_BATCH = 16
CUDA_PAGE_SIZE = 64
CUDA_MAX_BATCH_TOKENS = 16384
# The paged cache takes at most this share of the free memory (activations, logits and
# the fluency filter's batches need the rest).
CACHE_MEMORY_SHARE = 0.4


ATTENTIONS = ("auto", "varlen", "sdpa")


def resolve_attention(name: str, model_config) -> str:
    """The attention `name` stands for with this model: `auto` is packed attention
    (`varlen`), which beat transformers' masked `sdpa` on an H100 (PyTorch's kernel) and on
    CPU (docs/benchmarks.md), unless the model's attention does what it does not (a sliding
    window, soft-capping): then `sdpa`. `sdpa` stays for comparison."""
    if name not in ATTENTIONS:
        raise ValueError(f"Unknown attention {name!r}; choose from {', '.join(ATTENTIONS)}.")
    reason = varlen_attention.unsupported_reason(model_config)
    if name == "varlen" and reason:
        raise ValueError(f"Packed attention cannot run this model ({reason}); use sdpa.")
    if name == "auto":
        return "sdpa" if reason else "varlen"
    return name


class ContinuousEngine:
    name = "continuous"

    def __init__(self, lm, attention: str = "auto", batching: dict | None = None) -> None:
        """`batching`: ContinuousBatchingConfig settings that replace ours (benchmarks)."""
        self.lm = lm
        self.tokenizer = lm.tokenizer
        self.model_name = lm.name
        self.attention = resolve_attention(attention, lm.model.config)
        self.batching = dict(batching or {})

    @torch.inference_mode()
    def generate(
        self,
        prompts: list[str | PromptParts],
        max_new_tokens: list[int],
        config: DecodingConfig,
        *,
        answers_needed: list[int] | None = None,
        stop_at_newline: bool = False,
        on_result: ResultHook | None = None,
    ) -> list[list[str]]:
        if not prompts:
            return []
        answers_needed = answers_needed or [0] * len(prompts)
        if config.num_beams > 1:
            return generate_continuations(
                self.lm,
                prompts,
                max_new_tokens,
                config,
                answers_needed=answers_needed,
                stop_at_newline=stop_at_newline,
                on_result=on_result,
            )
        results, redo = self._decode_batched(
            prompts, max_new_tokens, config, answers_needed, stop_at_newline, on_result
        )
        if redo:
            logger.info("%d prompts broke the writing rule; our loop decodes them again", len(redo))
            again = generate_continuations(
                self.lm,
                [prompts[index] for index in redo],
                [max_new_tokens[index] for index in redo],
                config,
                answers_needed=[answers_needed[index] for index in redo],
                stop_at_newline=stop_at_newline,
                on_result=lambda i, texts: on_result(redo[i], texts) if on_result else None,
            )
            for index, texts in zip(redo, again, strict=True):
                results[index] = texts
        return [texts or [] for texts in results]

    def _decode_batched(
        self,
        prompts: list[str | PromptParts],
        max_new_tokens: list[int],
        config: DecodingConfig,
        answers_needed: list[int],
        stop_at_newline: bool,
        on_result: ResultHook | None,
    ) -> tuple[list[list[str] | None], list[int]]:
        """Every prompt through one continuous batching manager: (each prompt's texts, or
        None where a continuation broke the writing rule; those prompts, to decode again)."""
        tokenizer = self.tokenizer
        texts = [prompt.text if isinstance(prompt, PromptParts) else prompt for prompt in prompts]
        inputs = tokenizer(texts, add_special_tokens=False)["input_ids"]
        eos = eos_token_ids(self.lm)
        stops = sorted(eos | (newline_token_ids(tokenizer) if stop_at_newline else set()))
        rule = writing_rule(tokenizer, frozenset(eos))
        # Sampling draws `per_prompt` children of one request (one prefill); greedy
        # decoding would draw the same text each time, so it decodes once and repeats.
        copies = config.per_prompt if config.do_sample else 1
        generation_config = _generation_config(self.lm, config, copies, stops, rule.always_banned())
        batching = _batching_config(
            self.lm, config, inputs, max_new_tokens, copies, self.attention, self.batching
        )
        hints = WorkloadHints(
            max_prompt_length=max(len(ids) for ids in inputs),
            max_generated_length=max(max_new_tokens),
            num_requests=len(prompts) * copies,
        )
        packed = self.attention == "varlen"
        attention = varlen_attention.attention_set(self.lm.model) if packed else nullcontext()
        with (
            attention,
            _manager_running(self.lm.model, generation_config, batching, hints, rule) as manager,
        ):
            pending = _requests_add(manager, inputs, max_new_tokens, stops, copies)
            return self._results_collect(
                manager, pending, eos, copies, config.per_prompt, answers_needed, on_result
            )

    def _results_collect(
        self,
        manager,
        pending: dict[str, tuple[int, int]],
        eos: set[int],
        copies: int,
        per_prompt: int,
        answers_needed: list[int],
        on_result: ResultHook | None,
    ) -> tuple[list[list[str] | None], list[int]]:
        """Each prompt's texts as its last request finishes, handed to `on_result` at once;
        a prompt with a continuation that breaks the writing rule is left None and listed."""
        prompts = len(answers_needed)
        samples: list[list[list[int] | None]] = [[None] * copies for _ in range(prompts)]
        results: list[list[str] | None] = [None] * prompts
        redo: list[int] = []  # prompts with a continuation that broke the writing rule
        left = [copies] * prompts
        while pending:
            output = manager.get_result(timeout=POLL_SECONDS)
            if output is None:
                if not manager.is_running():
                    raise RuntimeError(
                        "Continuous batching stopped before every prompt was answered."
                    )
                continue
            if not output.is_finished() or output.request_id not in pending:
                continue
            if output.error is not None:
                raise RuntimeError(f"Continuous batching failed a request: {output.error}")
            index, sample = pending.pop(output.request_id)
            samples[index][sample] = _without_end(output.generated_tokens, eos)
            left[index] -= 1
            if left[index] == 0:
                decoded = [
                    _cut_after_answers(
                        self.tokenizer.decode(tokens, skip_special_tokens=False),
                        answers_needed[index],
                    )
                    for tokens in samples[index]
                ]
                if any(breaks_format(text) for text in decoded):
                    redo.append(index)
                    continue
                results[index] = [decoded[n % copies] for n in range(per_prompt)]
                if on_result:
                    on_result(index, results[index])
        return results, redo


@contextmanager
def _manager_running(model, generation_config, batching, hints, rule: WritingRule):
    """A continuous batching manager for one call, with the whole writing rule in its
    processors, running until the block ends (what transformers'
    `continuous_batching_context_manager` does, with room to add a processor before the
    generation thread starts). No warm-up: it captures CUDA graphs for the largest shapes,
    and on an H100 that cost more than the graphs saved in a manager that lives for one
    call (docs/benchmarks.md)."""
    manager = model.init_continuous_batching(
        generation_config=generation_config,
        continuous_batching_config=batching,
        workload_hints=hints,
    )
    try:
        _banned_ids_masked(manager, _logits_width(model), model.device)
        if not manager.continuous_batching_config.use_async_batching:
            _processor_first(manager, WritingRuleProcessor(rule, model.device))
        manager.start()
        yield manager
    finally:
        manager.stop(block=True, timeout=10)
        manager.destroy()


def _processor_first(manager, processor: ContinuousBatchingLogitsProcessor) -> None:
    """Puts `processor` before the manager's others (top-k and top-p then never keep only
    tokens it bans), with a row of its own in the per-request arguments."""
    processors = manager.logit_processor
    processors.logits_processor.insert(0, processor)
    processors.tensors_required += 1
    processors.do_processing = True


class WritingRuleProcessor(ContinuousBatchingLogitsProcessor):
    """The writing rule inside continuous batching: each request's marker state, stepped on
    the host over the tokens it wrote since the last step, masks its next token.

    Continuous batching calls `prepare_tensor_args` with the requests that predict a token
    this step, in the order of the rows of the scores it then passes to `__call__`. The
    state after a request's tokens is the state its next token is allowed from (all of
    them: with synchronous batching a request's last token is on the host before the next
    step is prepared)."""

    supported_kwargs: dict[str, type] = {}
    ignored_kwargs: tuple[str, ...] = ()

    def __init__(self, rule: WritingRule, device: torch.device) -> None:
        self.rule = rule.to(device)
        # Builds the rule's byte table now, not while a CUDA graph is being captured.
        self.rule.allowed(torch.zeros(1, dtype=torch.long, device=device), 1)
        self.table = rule.host_table
        self.seen: dict[str, tuple[int, int]] = {}  # request id -> (state, tokens read)

    def fill_defaults(self, int32_tensor: torch.Tensor) -> None:
        int32_tensor.fill_(0)  # outside any marker

    def prepare_tensor_args(self, requests_with_new_token) -> torch.Tensor:
        states = [self.state_of(future.state) for future in requests_with_new_token]
        return torch.tensor(states, dtype=torch.int32)

    def state_of(self, request) -> int:
        """The marker state after the tokens `request` has written (read once each)."""
        state, read = self.seen.get(request.request_id, (0, 0))
        tokens = request.generated_tokens
        width = len(self.table[0])
        for token in tokens[read:]:
            # As `WritingRule.step`: an id past the vocabulary, or a banned step, restarts
            # outside (the mask keeps both from being sampled).
            state = self.table[state][token] if 0 <= token < width else 0
            state = 0 if state == BANNED else state
        self.seen[request.request_id] = (state, len(tokens))
        return state

    def __call__(self, scores: torch.Tensor, tensor_arg: torch.Tensor) -> torch.Tensor:
        states = tensor_arg[: scores.shape[0]].to(scores.device, torch.long)
        return scores.masked_fill(~self.rule.allowed(states, scores.shape[-1]), float("-inf"))


class BannedIdsMask(LogitsProcessor):
    """The suppress-tokens processor's work as one masked fill: a (vocab,) bool mask on the
    model's device, made before decoding starts.

    transformers' `SuppressTokensLogitsProcessor` calls `torch.isin` at every step, which on
    CUDA sorts and counts on the device and waits for the answer; CUDA-graph capture
    refuses that wait, so continuous batching with graphs failed on its first step (H100,
    2026-11-27: "operation not permitted when stream is capturing"). A masked fill with a
    tensor made beforehand is one kernel and captures."""

    def __init__(self, banned: torch.Tensor, width: int, device: torch.device) -> None:
        ids = banned.to("cpu", torch.long)
        ids = ids[(ids >= 0) & (ids < width)]  # ids past the logits are never written anyway
        mask = torch.zeros(width, dtype=torch.bool)
        mask[ids] = True
        self.mask = mask.to(device)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        width = scores.shape[-1]
        mask = self.mask
        if width != mask.shape[0]:  # shapes are known when a graph is captured: no wait
            mask = torch.nn.functional.pad(mask[:width], (0, max(0, width - mask.shape[0])))
        return scores.masked_fill(mask, float("-inf"))


def _banned_ids_masked(manager, width: int, device: torch.device) -> None:
    """Replaces the manager's suppress-tokens processors by `BannedIdsMask`s of `width`
    columns on `device`, before decoding starts. Other processors are left alone (some keep
    their per-request arguments on the CPU on purpose)."""
    processors = getattr(getattr(manager, "logit_processor", None), "logits_processor", None)
    for position, processor in enumerate(processors or ()):
        if isinstance(processor, SuppressTokensLogitsProcessor):
            processors[position] = BannedIdsMask(processor.suppress_tokens, width, device)


def _logits_width(model) -> int:
    """Columns of the model's logits: its output embedding's rows (the config's vocabulary
    size for a model without one)."""
    head = model.get_output_embeddings()
    return int(head.weight.shape[0]) if head is not None else int(model.config.vocab_size)


def _requests_add(
    manager, inputs: list[list[int]], budgets: list[int], stops: list[int], copies: int
) -> dict[str, tuple[int, int]]:
    """One request per prompt (with `copies - 1` children): request id -> (prompt, sample)."""
    pending: dict[str, tuple[int, int]] = {}
    for index, ids in enumerate(inputs):
        request = manager.add_request(
            input_ids=ids,
            request_id=f"p{index}",
            max_new_tokens=budgets[index],
            eos_token_id=stops,
        )
        if request is None:
            raise RuntimeError("Continuous batching refused a request (queue closed).")
        pending[request] = (index, copies - 1)
        for child in range(copies - 1):
            pending[f"{request}__child#{child}"] = (index, child)
    return pending


def _batching_config(
    lm, config: DecodingConfig, inputs, budgets, copies: int, attention: str, overrides: dict
):
    """How continuous batching sizes its paged cache and batches.

    Left alone, it sizes the cache from free memory: most of a GPU, most of the
    machine's RAM on CPU. Attention then reads (and masks) far more cache than a
    workload of short prompts uses, and every step pays for it. So the cache holds
    just this workload (every row's prompt and budget, shared prefixes not counted),
    up to `CACHE_MEMORY_SHARE` of the free memory: a larger workload waits for pages
    as earlier rows finish. `overrides` (a benchmark's) replace any of these settings.
    """
    cuda = lm.device.type == "cuda"
    packed = attention == "varlen"  # linear in the batch: no cap on requests needed
    page = CUDA_PAGE_SIZE if cuda else CPU_PAGE_SIZE
    per_row = [-(-(len(ids) + budget) // page) for ids, budget in zip(inputs, budgets, strict=True)]
    blocks = sum(per_row) * copies + 1
    longest = max(per_row)
    fit = int(free_memory(lm.device) * CACHE_MEMORY_SHARE) // cache_block_bytes(lm, page)
    settings = {
        "seed": config.seed,
        "page_size": page,
        "num_blocks": min(blocks, max(fit, longest * copies + 1)),
        "max_batch_tokens": CUDA_MAX_BATCH_TOKENS if cuda else CPU_MAX_BATCH_TOKENS,
        "max_requests_per_batch": None if cuda or packed else CPU_MAX_REQUESTS_PER_BATCH,
        "use_cuda_graph": False,
        "use_async_batching": None if cuda else False,
    }
    return ContinuousBatchingConfig(**{**settings, **overrides})


def cache_block_bytes(lm, page: int) -> int:
    """Bytes one block of the paged cache takes: keys and values of `page` tokens, every layer."""
    model_config = lm.model.config
    heads = model_config.num_attention_heads
    key_heads = getattr(model_config, "num_key_value_heads", None) or heads
    head_dim = getattr(model_config, "head_dim", None) or model_config.hidden_size // heads
    element = torch.finfo(lm.model.dtype).bits // 8
    return 2 * model_config.num_hidden_layers * page * key_heads * head_dim * element


def free_memory(device: torch.device) -> int:
    """Bytes free on `device`: the GPU's free memory, or the machine's available RAM."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    return psutil.virtual_memory().available


def _generation_config(
    lm, config: DecodingConfig, copies: int, stops: list[int], banned: list[int]
):
    base = lm.model.generation_config or GenerationConfig()
    values = {
        "do_sample": config.do_sample,
        "num_return_sequences": copies,
        "eos_token_id": stops,
        "pad_token_id": lm.tokenizer.pad_token_id,
        "num_beams": 1,
        # The model's own defaults (repetition penalty and the like) must not apply:
        # every engine samples with exactly what DecodingConfig says.
        "repetition_penalty": None,
        "top_k": config.top_k if config.do_sample else None,
        "top_p": config.top_p if config.do_sample else None,
        "temperature": config.temperature if config.do_sample else None,
        # The static part of the writing rule; the rest is checked on each result.
        "suppress_tokens": banned or None,
    }
    return GenerationConfig.from_dict({**base.to_dict(), **values})


def _without_end(tokens: list[int], eos: set[int]) -> list[int]:
    """The generated tokens without a final end-of-text token (a newline stays: it is text)."""
    return tokens[:-1] if tokens and tokens[-1] in eos else list(tokens)


def _cut_after_answers(text: str, needed: int) -> str:
    """The text up to and including its `needed`-th [ANSWER] marker (all of it when 0)."""
    if not needed:
        return text
    position = -1
    for _ in range(needed):
        position = text.find(ANSWER, position + 1)
        if position < 0:
            return text
    return text[: position + len(ANSWER)]
