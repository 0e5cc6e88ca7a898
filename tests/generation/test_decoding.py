import pytest
import torch

from generation.decoding import DecodingConfig, generate_continuations, newline_token_ids
from generation.models import load_causal_lm
from tests.generation.tiny_models import tiny_lm_directory


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_lm(request, tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


PROMPTS = [
    "The movie was",
    "A man is playing a guitar on the stage and then",
    "Two dogs",
]
GREEDY = DecodingConfig(do_sample=False, per_prompt=1, batch_size=8, seed=None)


def test_left_padded_batches_decode_like_single_prompts(tiny_lm):
    batched = generate_continuations(tiny_lm, PROMPTS, [6, 6, 6], GREEDY)
    one_by_one = [generate_continuations(tiny_lm, [prompt], [6], GREEDY)[0] for prompt in PROMPTS]
    assert batched == one_by_one
    assert tiny_lm.tokenizer.padding_side == "left"


def test_results_come_back_in_prompt_order_with_per_prompt_counts(tiny_lm):
    config = DecodingConfig(per_prompt=3, batch_size=2, seed=1)
    results = generate_continuations(tiny_lm, PROMPTS, [5, 5, 5], config)
    assert [len(r) for r in results] == [3, 3, 3]
    again = generate_continuations(tiny_lm, PROMPTS, [5, 5, 5], config)
    assert results == again  # seeded sampling is reproducible


def test_beam_search_returns_distinct_beams(tiny_lm):
    config = DecodingConfig(do_sample=False, num_beams=4, per_prompt=3, batch_size=4)
    results = generate_continuations(tiny_lm, PROMPTS[:2], [5, 5], config)
    assert all(len(beams) == 3 for beams in results)


def test_progress_counts_every_prompt(tiny_lm):
    seen = []
    generate_continuations(tiny_lm, PROMPTS, [3, 3, 3], GREEDY, progress=seen.append)
    assert sum(seen) == len(PROMPTS)


def test_newline_ids_cover_tokens_with_newlines(tiny_lm):
    ids = newline_token_ids(tiny_lm.tokenizer)
    encoded = tiny_lm.tokenizer("a\nb", add_special_tokens=False)["input_ids"]
    assert any(token in ids for token in encoded)


def test_cuda_oom_halves_the_batch(tiny_lm, monkeypatch):
    from generation import decoding

    calls = []
    real = decoding._generate_batch

    def flaky(lm, prompts, *args, **kwargs):
        calls.append(len(prompts))
        if len(prompts) > 1:
            raise torch.cuda.OutOfMemoryError("simulated")
        return real(lm, prompts, *args, **kwargs)

    monkeypatch.setattr(decoding, "_generate_batch", flaky)
    results = generate_continuations(
        tiny_lm, PROMPTS, [3, 3, 3], DecodingConfig(do_sample=False, per_prompt=1, batch_size=4)
    )
    assert calls[:3] == [3, 2, 1] and len(results) == 3 and all(results)


@pytest.mark.parametrize(
    "bad",
    [
        {"per_prompt": 0},
        {"num_beams": 2, "per_prompt": 3, "do_sample": False},
        {"temperature": 0},
        {"top_p": 1.5},
    ],
)
def test_bad_decoding_settings_are_refused(bad):
    with pytest.raises(ValueError):
        DecodingConfig(**bad)


def test_max_new_tokens_follows_the_original_length():
    config = DecodingConfig()
    assert config.max_new_tokens(10) == 23
    assert config.max_new_tokens(1000) == config.max_new_tokens_cap


SHARED = "Examples first.\nA dog runs.\n"


@pytest.mark.parametrize("shared", ["", SHARED])
def test_prompt_cache_continues_exactly_where_each_prompt_ends(tiny_lm, shared):
    """Shared part, per-context part, padding in the middle and repeated rows: every row
    gets the next-token logits of its own prompt computed alone."""
    from generation.decoding import PromptParts, _prompt_cache, _shared_cache

    model, tokenizer = tiny_lm.model, tiny_lm.tokenizer
    parts = [
        PromptParts(shared, "The movie was", " great"),
        PromptParts(shared, "Two dogs", " are running"),
        PromptParts(shared, "The movie was", " not a bad film and"),
        PromptParts(shared, "", "A man is playing"),
    ]
    cached = _shared_cache(tiny_lm, shared) if shared else None
    ids, mask, cache = _prompt_cache(tiny_lm, parts, cached, copies=2)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.inference_mode():
        step = model(
            input_ids=ids[:, -1:],
            attention_mask=mask,
            position_ids=positions[:, -1:],
            cache=cache,
        ).logits[:, -1]  # (rows * 2, vocab)
        for row, part in enumerate(parts):
            alone = tokenizer(part.text, return_tensors="pt", add_special_tokens=False)
            expected = model(**alone).logits[0, -1]
            for copy_index in range(2):
                assert torch.allclose(step[2 * row + copy_index], expected, atol=1e-4)


def test_prompts_in_parts_decode_like_whole_prompts(tiny_lm):
    from generation.decoding import PromptParts

    parts = [
        PromptParts(SHARED, "The movie", " was"),
        PromptParts(SHARED, "The movie", " is"),
        PromptParts(SHARED, "Two dogs", " are"),
    ]
    split = generate_continuations(tiny_lm, parts, [6] * 3, GREEDY)
    whole = generate_continuations(tiny_lm, [p.text for p in parts], [6] * 3, GREEDY)
    assert split == whole


def test_parts_that_tokenize_differently_apart_are_folded_back(tiny_lm):
    from generation.decoding import PromptParts, _clean_parts

    clean = PromptParts("Examples.\n", "The movie", " was")
    assert _clean_parts(tiny_lm.tokenizer, clean, GREEDY) == clean
    # "gre" + "at" is one token joined but two apart: the prompt is computed whole.
    messy = PromptParts("", "The movie was gre", "at")
    assert _clean_parts(tiny_lm.tokenizer, messy, GREEDY) == PromptParts("", "", messy.text)
    beams = DecodingConfig(do_sample=False, num_beams=2, per_prompt=1)
    assert _clean_parts(tiny_lm.tokenizer, clean, beams) == PromptParts("", "", clean.text)


def test_sampled_copies_of_one_prompt_differ(tiny_lm):
    sampled = generate_continuations(
        tiny_lm, PROMPTS, [6, 6, 6], DecodingConfig(per_prompt=3, batch_size=8, seed=5)
    )
    assert all(len(group) == 3 for group in sampled)
    assert any(len(set(group)) > 1 for group in sampled)


def test_rows_leave_the_batch_when_done_without_changing_the_others(tiny_lm):
    """Finished rows are dropped mid-batch; every row still reads as if decoded alone."""
    prompts = [*PROMPTS, "It is not a bad film", "Some people liked the music"]
    stops = {"stop_at_newline": True, "answers_needed": [1] * len(prompts)}
    batched = generate_continuations(tiny_lm, prompts, [40] * len(prompts), GREEDY, **stops)
    alone = [
        generate_continuations(
            tiny_lm, [p], [40], GREEDY, stop_at_newline=True, answers_needed=[1]
        )[0]
        for p in prompts
    ]
    assert batched == alone
    lengths = {len(tiny_lm.tokenizer(c[0], add_special_tokens=False)["input_ids"]) for c in batched}
    assert len(lengths) > 1, "no row stopped early: the test would not exercise removal"
