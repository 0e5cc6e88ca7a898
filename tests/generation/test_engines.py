"""The engine contract (generation.engines.base), run against every in-process engine.

Greedy decoding must give the same text in each; every engine returns `per_prompt`
continuations per prompt in prompt order, honours each prompt's budget and stop rules,
and reports each prompt once through `on_result`.
"""

import pytest
import torch
from transformers import Gemma2Config, MistralConfig, Qwen2Config

from generation.decoding import DecodingConfig, PromptParts
from generation.engines import make_engine, resolve_engine
from generation.engines.continuous import ContinuousEngine, resolve_attention
from generation.engines.loop import LoopEngine
from generation.models import load_causal_lm
from tests.generation.tiny_models import tiny_lm_directory

# Continuous batching with packed attention (generation.engines.varlen_attention; on CPU
# it attends sequence by sequence) and with transformers' masked attention.
IN_PROCESS = ["loop", "continuous", "continuous:sdpa"]
PROMPTS = [
    "The movie was",
    "A man is playing a guitar on the stage and then",
    "Two dogs",
    PromptParts("Examples first.\n", "The soup was warm <|perturb|>", " [negation] The soup"),
]
GREEDY = DecodingConfig(do_sample=False, per_prompt=2, batch_size=8, seed=None)


def engine_for(spec: str, lm):
    """`loop`, `continuous` (packed attention) or `continuous:ATTENTION`."""
    name, _, attention = spec.partition(":")
    return ContinuousEngine(lm, attention=attention) if attention else make_engine(name, lm=lm)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_lm(request, tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


def test_auto_is_continuous_batching_on_cuda_and_our_loop_on_cpu():
    assert resolve_engine("auto", "cuda") == "continuous"
    assert resolve_engine("auto", "cuda:1") == "continuous"
    assert resolve_engine("auto", "cpu") == "loop"
    assert resolve_engine("continuous", "cpu") == "continuous"
    with pytest.raises(ValueError, match="Unknown engine 'vllm'"):
        resolve_engine("vllm", "cpu")


def test_continuous_attention_is_packed_unless_asked_otherwise(tiny_lm):
    config = tiny_lm.model.config
    assert resolve_attention("auto", config) == "varlen"
    assert resolve_attention("sdpa", config) == "sdpa"
    assert ContinuousEngine(tiny_lm).attention == "varlen"
    with pytest.raises(ValueError, match="Unknown attention 'flash'"):
        ContinuousEngine(tiny_lm, attention="flash")


@pytest.mark.parametrize(
    "config, reason",
    [
        (MistralConfig(sliding_window=4096), "sliding-window attention"),
        (Gemma2Config(), "sliding-window attention"),
        (Gemma2Config(layer_types=["full_attention"] * 26), "soft-capped attention scores"),
    ],
)
def test_a_model_whose_attention_packed_attention_cannot_do_keeps_sdpa(config, reason):
    assert resolve_attention("auto", config) == "sdpa"
    with pytest.raises(ValueError, match=f"cannot run this model \\({reason}\\)"):
        resolve_attention("varlen", config)
    assert resolve_attention("auto", Qwen2Config()) == "varlen"  # a window it does not use


def test_packed_attention_is_set_only_while_continuous_batching_decodes(tiny_lm):
    before = tiny_lm.model.config._attn_implementation
    ContinuousEngine(tiny_lm, attention="varlen").generate(PROMPTS[:2], [3, 3], GREEDY)
    assert tiny_lm.model.config._attn_implementation == before


def test_make_engine_builds_the_named_engine(tiny_lm):
    assert isinstance(make_engine("auto", lm=tiny_lm), LoopEngine)  # tests run on CPU
    assert isinstance(make_engine("continuous", lm=tiny_lm), ContinuousEngine)
    with pytest.raises(ValueError, match="needs server settings"):
        make_engine("server")
    with pytest.raises(ValueError, match="needs a loaded model"):
        make_engine("loop")


def test_greedy_text_is_the_same_in_every_engine(tiny_lm):
    budgets = [7, 3, 5, 6]  # different per prompt: each engine must honour its own
    outputs = {
        name: engine_for(name, tiny_lm).generate(PROMPTS, budgets, GREEDY) for name in IN_PROCESS
    }
    assert outputs["loop"] == outputs["continuous"] == outputs["continuous:sdpa"]
    longer = make_engine("loop", lm=tiny_lm).generate(PROMPTS, [7] * len(PROMPTS), GREEDY)
    for short, long, budget in zip(outputs["loop"], longer, budgets, strict=True):
        assert short[0] == short[1]  # greedy: per_prompt copies of one text
        assert long[0].startswith(short[0])
        if budget < 7:
            assert len(short[0]) < len(long[0])  # cut at its own budget, not the batch's


@pytest.mark.parametrize("name", IN_PROCESS)
def test_sampling_gives_per_prompt_texts_and_reports_each_prompt_once(tiny_lm, name):
    engine = engine_for(name, tiny_lm)
    reported = []
    config = DecodingConfig(per_prompt=3, seed=3, batch_size=2)
    outputs = engine.generate(
        PROMPTS, [4] * len(PROMPTS), config, on_result=lambda i, t: reported.append((i, t))
    )
    assert [len(texts) for texts in outputs] == [3] * len(PROMPTS)
    assert sorted(index for index, _ in reported) == list(range(len(PROMPTS)))
    assert dict(reported) == dict(enumerate(outputs))
    assert engine.generate([], [], config) == []


@pytest.mark.parametrize("name", IN_PROCESS)
def test_newline_stops_a_continuation_in_every_engine(tiny_lm, name):
    engine = engine_for(name, tiny_lm)
    outputs = engine.generate(PROMPTS, [40] * len(PROMPTS), GREEDY, stop_at_newline=True)
    for texts in outputs:
        # Nothing after the first newline: the row stopped there (or ran out of budget).
        assert "\n" not in texts[0].rstrip("\n")


def test_continuous_batching_cuts_after_the_needed_answer_markers(tiny_lm):
    from generation.engines.continuous import _cut_after_answers

    assert _cut_after_answers("not [ANSWER] very [ANSWER] tail", 1) == "not [ANSWER]"
    assert _cut_after_answers("not [ANSWER] very [ANSWER] tail", 2) == "not [ANSWER] very [ANSWER]"
    assert _cut_after_answers("not [ANSWER] tail", 2) == "not [ANSWER] tail"
    assert _cut_after_answers("anything", 0) == "anything"


@pytest.mark.parametrize("name", IN_PROCESS)
def test_every_engine_decodes_a_bf16_model_on_cpu(tmp_path_factory, name):
    """What "auto" loads on a CPU with bf16 instructions (generation.models.resolve_dtype)."""
    lm = load_causal_lm(
        tiny_lm_directory(tmp_path_factory, "llama"), device="cpu", dtype="bfloat16"
    )
    assert next(lm.model.parameters()).dtype == torch.bfloat16
    engine = engine_for(name, lm)
    config = DecodingConfig(per_prompt=3, seed=3, batch_size=2)
    outputs = engine.generate(PROMPTS, [6] * len(PROMPTS), config)
    assert [len(texts) for texts in outputs] == [3] * len(PROMPTS)
    assert all(isinstance(text, str) for texts in outputs for text in texts)
    greedy = engine.generate(PROMPTS, [6] * len(PROMPTS), GREEDY, stop_at_newline=True)
    assert all(texts[0] == texts[1] for texts in greedy)


def test_the_paged_cache_holds_the_workload_up_to_a_share_of_free_memory(tiny_lm, monkeypatch):
    from generation.engines import continuous

    inputs, budgets = [[1] * 70, [1] * 10], [20, 5]  # 2 and 1 pages of 64 tokens
    block = continuous.cache_block_bytes(tiny_lm, continuous.CPU_PAGE_SIZE)
    config = tiny_lm.model.config
    key_heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = config.hidden_size // config.num_attention_heads
    assert block == 2 * config.num_hidden_layers * 64 * key_heads * head_dim * 4  # fp32
    monkeypatch.setattr(continuous, "free_memory", lambda device: 10**12)
    roomy = continuous._batching_config(tiny_lm, GREEDY, inputs, budgets, 3, "varlen", {})
    assert roomy.num_blocks == (2 + 1) * 3 + 1  # the workload
    assert roomy.max_requests_per_batch is None  # packed attention needs no cap
    monkeypatch.setattr(continuous, "free_memory", lambda device: block * 10)
    tight = continuous._batching_config(tiny_lm, GREEDY, inputs, budgets, 3, "sdpa", {})
    assert tight.num_blocks == 2 * 3 + 1  # room for the longest request's rows, no less
    assert tight.max_requests_per_batch == continuous.CPU_MAX_REQUESTS_PER_BATCH
    replaced = continuous._batching_config(
        tiny_lm, GREEDY, inputs, budgets, 3, "varlen", {"num_blocks": 99}
    )
    assert replaced.num_blocks == 99


def test_a_workload_larger_than_the_cache_waits_for_pages(tiny_lm, monkeypatch):
    """With room for one request at a time, every prompt is still answered, as the loop does."""
    from generation.engines import continuous

    monkeypatch.setattr(continuous, "free_memory", lambda device: 1)
    budgets = [7, 3, 5, 6]
    squeezed = make_engine("continuous", lm=tiny_lm).generate(PROMPTS, budgets, GREEDY)
    assert squeezed == make_engine("loop", lm=tiny_lm).generate(PROMPTS, budgets, GREEDY)


@pytest.mark.parametrize("width", [12, 10, 16])
def test_banned_ids_mask_masks_what_suppress_tokens_masks(width):
    """The capture-safe mask gives the suppress-tokens processor's scores, also when the
    logits are narrower or wider than the mask (ids past the logits are dropped)."""
    from transformers.generation.logits_process import SuppressTokensLogitsProcessor

    from generation.engines.continuous import BannedIdsMask

    banned = [0, 3, 5, 11, 40]
    mask = BannedIdsMask(torch.tensor(banned), 12, torch.device("cpu"))
    scores = torch.randn(4, width, generator=torch.Generator().manual_seed(width))
    expected = SuppressTokensLogitsProcessor(banned)(torch.zeros(4, 1, dtype=torch.long), scores)
    got = mask(torch.zeros(4, 1, dtype=torch.long), scores)
    assert torch.equal(got, expected)
    assert torch.isinf(got[:, [i for i in banned if i < min(width, 12)]]).all()


def test_suppress_tokens_is_replaced_by_the_mask_on_the_model_device():
    """Before decoding starts: transformers' processor calls `torch.isin` each step, which
    waits on the GPU and which CUDA-graph capture refuses (H100, 2026-11-27)."""
    from types import SimpleNamespace

    from transformers.generation.logits_process import (
        LogitsProcessorList,
        SuppressTokensLogitsProcessor,
        TemperatureLogitsWarper,
    )

    from generation.engines.continuous import BannedIdsMask, _banned_ids_masked

    temperature = TemperatureLogitsWarper(0.7)
    processors = LogitsProcessorList([temperature, SuppressTokensLogitsProcessor([3, 5])])
    manager = SimpleNamespace(logit_processor=SimpleNamespace(logits_processor=processors))
    _banned_ids_masked(manager, 8, torch.device("meta"))
    assert processors[0] is temperature
    assert isinstance(processors[1], BannedIdsMask)
    assert processors[1].mask.device.type == "meta" and processors[1].mask.shape == (8,)
    _banned_ids_masked(SimpleNamespace(), 8, torch.device("meta"))  # nothing to replace


def test_continuous_batching_decodes_through_the_mask(tiny_lm, monkeypatch):
    """The engine's manager applies `BannedIdsMask` at every step, not `torch.isin`."""
    from transformers.generation.logits_process import SuppressTokensLogitsProcessor

    from generation.engines.continuous import BannedIdsMask

    calls = []
    masked = BannedIdsMask.__call__

    def counted(self, input_ids, scores):
        calls.append(len(scores))
        return masked(self, input_ids, scores)

    monkeypatch.setattr(BannedIdsMask, "__call__", counted)

    def refused(self, input_ids, scores):
        raise AssertionError("the suppress-tokens processor ran inside continuous batching")

    monkeypatch.setattr(SuppressTokensLogitsProcessor, "__call__", refused)
    outputs = make_engine("continuous", lm=tiny_lm).generate(PROMPTS, [4, 4, 4, 4], GREEDY)
    assert len(outputs) == len(PROMPTS) and calls
