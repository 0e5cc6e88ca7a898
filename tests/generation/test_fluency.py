import dataclasses

import pytest
import torch
from transformers import AutoTokenizer

from generation import fluency
from generation.fluency import (
    FluencyItem,
    FluencyScore,
    fluency_scores,
    readable,
    sentence_logprobs,
    sentence_token_logprobs,
)
from generation.models import DEFAULT_MODEL, LoadedModel, load_causal_lm
from tests.generation.tiny_models import KINDS, default_model_cache, tiny_lm_directory

TEXTS = [
    "The movie was great.",
    "A man is playing a guitar on the stage, and nobody listens.",
    "Zebras juxtapose quixotic façades — naïve, 日本語, 🎬!",
    "",
    "It is not bad.",
    "Two dogs are running through a field of grass near the old barn.",
    "no",
]


@pytest.fixture(scope="module", params=KINDS)
def tiny_lm(request, tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


@pytest.fixture(scope="module")
def llama_lm(tmp_path_factory) -> LoadedModel:
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, "llama"), device="cpu")


def _reference_logprobs(lm: LoadedModel, text: str) -> torch.Tensor:
    """One text alone, no padding: log p(token_i | start, token_<i)."""
    tokenizer = lm.tokenizer
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    ids = torch.tensor([[start, *tokenizer(text, add_special_tokens=False).input_ids]])
    with torch.no_grad():
        logits = lm.model(input_ids=ids).logits.float()  # (1, n, V)
    return logits[0, :-1].log_softmax(-1).gather(-1, ids[0, 1:, None]).squeeze(-1)


def test_token_logprobs_match_an_unbatched_reference(tiny_lm):
    scored = sentence_token_logprobs(tiny_lm, TEXTS)

    assert len(scored) == len(TEXTS)
    for text, (logprobs, offsets) in zip(TEXTS, scored, strict=True):
        assert logprobs.dtype == torch.float32
        assert logprobs.device == torch.device("cpu")
        assert len(offsets) == len(logprobs)
        torch.testing.assert_close(logprobs, _reference_logprobs(tiny_lm, text), atol=1e-4, rtol=0)


def test_scores_do_not_depend_on_batch_size_or_padding_side(tiny_lm):
    one_by_one = sentence_logprobs(tiny_lm, TEXTS, batch_size=1)
    batched = sentence_logprobs(tiny_lm, TEXTS, batch_size=64)
    pairs = sentence_logprobs(tiny_lm, TEXTS, batch_size=2)
    tiny_lm.tokenizer.padding_side = "right"
    try:
        right = sentence_logprobs(tiny_lm, TEXTS, batch_size=64)
    finally:
        tiny_lm.tokenizer.padding_side = "left"

    for scores in (batched, pairs, right):
        assert scores == pytest.approx(one_by_one, abs=1e-4)


def test_sentence_logprob_is_the_sum_of_its_token_logprobs(tiny_lm):
    sums = sentence_logprobs(tiny_lm, TEXTS)
    tokens = sentence_token_logprobs(tiny_lm, TEXTS)

    for total, (logprobs, _) in zip(sums, tokens, strict=True):
        assert total == pytest.approx(float(logprobs.sum()), abs=1e-5)
    assert sums[TEXTS.index("")] == 0.0
    assert all(total < 0 for text, total in zip(TEXTS, sums, strict=True) if text)


def test_start_token_is_explicit_whatever_the_tokenizer_adds(llama_lm, tmp_path_factory):
    directory = tiny_lm_directory(tmp_path_factory, "llama")
    scores = []
    for add_bos in (True, False):
        tokenizer = AutoTokenizer.from_pretrained(directory, add_bos_token=add_bos)
        assert (tokenizer("hi").input_ids[0] == tokenizer.bos_token_id) is add_bos
        lm = dataclasses.replace(llama_lm, tokenizer=tokenizer)
        scores.append(sentence_logprobs(lm, TEXTS))

    assert scores[0] == pytest.approx(scores[1], abs=1e-6)
    # The first token is scored given bos, so even a one-token text has a real log-prob.
    first, _ = sentence_token_logprobs(llama_lm, ["no"])[0]
    assert len(first) >= 1


def test_gpt2_style_model_starts_from_eos(tmp_path_factory):
    lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")
    assert lm.tokenizer.bos_token_id is None

    ((logprobs, _),) = sentence_token_logprobs(lm, ["The movie was great."])

    ids = [lm.tokenizer.eos_token_id, *lm.tokenizer("The movie was great.").input_ids]
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, 0]  # (V,): after eos
    assert float(logprobs[0]) == pytest.approx(float(logits.log_softmax(-1)[ids[1]]), abs=1e-5)


def test_phrase_span_picks_the_overlapping_tokens(tiny_lm):
    text = "The movie was great, naïve and bold."
    start = text.index("great, naïve")
    span = (start, start + len("great, naïve"))
    ((logprobs, offsets),) = sentence_token_logprobs(tiny_lm, [text])

    (score,) = fluency_scores(tiny_lm, [FluencyItem("", text, phrases=(((0, 0), span),))])

    chosen = [k for k, (first, last) in enumerate(offsets) if first < span[1] and last > span[0]]
    covered = text[offsets[chosen[0]][0] : offsets[chosen[-1]][1]]
    assert covered.strip() == "great, naïve"  # nothing from "was" or "and"
    assert chosen == list(range(chosen[0], chosen[-1] + 1))
    assert score.changed == pytest.approx(float(logprobs[chosen].sum()), abs=1e-5)
    assert score.full == pytest.approx(float(logprobs.sum()), abs=1e-5)


def test_deleted_phrase_scores_zero_on_the_candidate_side(tiny_lm):
    original, candidate = "The movie was great.", "The movie was."
    old = (original.index(" great"), original.index("."))
    new = (candidate.index("."), candidate.index("."))
    (logprobs, offsets), _ = sentence_token_logprobs(tiny_lm, [original, candidate])

    (score,) = fluency_scores(tiny_lm, [FluencyItem(original, candidate, phrases=((old, new),))])

    removed = [k for k, (first, last) in enumerate(offsets) if first < old[1] and last > old[0]]
    assert score.changed == pytest.approx(-float(logprobs[removed].sum()), abs=1e-5)
    assert score.changed > 0  # losing unlikely tokens raises the phrase's log-prob


def _span(text: str, phrase: str) -> tuple[int, int]:
    start = text.index(phrase)
    return start, start + len(phrase)


def test_changed_is_the_worst_op_and_none_without_phrases(tiny_lm):
    original = "The movie was great and the acting was good."
    candidate = "The movie was bad and the acting was quixotic."
    ops = (
        (_span(original, "great"), _span(candidate, "bad")),
        (_span(original, "good"), _span(candidate, "quixotic")),
    )
    both, first, second, none = fluency_scores(
        tiny_lm,
        [
            FluencyItem(original, candidate, ops),
            FluencyItem(original, candidate, ops[:1]),
            FluencyItem(original, candidate, ops[1:]),
            FluencyItem(original, candidate),
        ],
    )

    assert both.changed == pytest.approx(min(first.changed, second.changed))
    assert none.changed is None
    assert both.full == first.full == second.full == none.full


def test_span_outside_the_text_is_an_error(tiny_lm):
    with pytest.raises(ValueError, match="outside"):
        fluency_scores(tiny_lm, [FluencyItem("short", "short!", phrases=(((0, 5), (3, 99)),))])


def test_text_longer_than_the_model_reads_is_an_error(tiny_lm):
    with pytest.raises(ValueError, match="longer than"):
        sentence_logprobs(tiny_lm, ["word " * 500])


def test_readable_says_which_texts_the_model_reads_whole(tiny_lm):
    limit = tiny_lm.model.config.max_position_embeddings
    assert readable(tiny_lm, []) == []
    assert readable(tiny_lm, ["short", "word " * limit]) == [True, False]
    with pytest.raises(ValueError, match="longer than"):
        sentence_logprobs(tiny_lm, ["word " * limit])  # what `readable` saves a run from


def test_no_texts_no_work(tiny_lm):
    assert sentence_token_logprobs(tiny_lm, []) == []
    assert fluency_scores(tiny_lm, []) == []


@pytest.mark.parametrize(
    ("full", "changed", "expected"),
    [
        (-10.0, None, True),  # exactly at the boundary still passes
        (-10.001, None, False),
        (3.0, -10.0, True),
        (3.0, -10.001, False),
        (-10.5, 0.0, False),
        (0.0, 0.0, True),
    ],
)
def test_passes_respects_the_threshold_boundary(full, changed, expected):
    assert FluencyScore(full=full, changed=changed).passes(10.0) is expected


def test_passes_on_real_tiny_model_scores(tiny_lm):
    original, candidate = "The movie was great.", "The movie was quixotic, 日本語."
    op = (_span(original, "great"), _span(candidate, "quixotic, 日本語"))
    items = [FluencyItem(original, candidate, (op,))]
    (score,) = fluency_scores(tiny_lm, items)
    worst = min(score.full, score.changed)
    assert worst < 0  # a random model still finds more, rarer tokens less likely

    assert score.passes(-worst)
    assert not score.passes(-worst - 1e-3)


def test_each_distinct_text_is_scored_once(llama_lm, monkeypatch):
    rows = []
    forward = llama_lm.model.forward

    def counting_forward(*args, **kwargs):
        rows.extend(kwargs["input_ids"].tolist())
        return forward(*args, **kwargs)

    monkeypatch.setattr(llama_lm.model, "forward", counting_forward)
    original = "The movie was great."
    candidates = ["The movie was bad.", "The movie was not great.", "The movie was bad."]
    items = [FluencyItem(original, candidate) for candidate in candidates]
    items.append(FluencyItem("It is fine.", "The movie was bad."))

    scores = fluency_scores(llama_lm, items, batch_size=2)

    assert len(rows) == 4  # 2 originals + 2 distinct candidates
    monkeypatch.undo()
    alone = [fluency_scores(llama_lm, [item])[0] for item in items]
    assert [s.full for s in scores] == pytest.approx([s.full for s in alone], abs=1e-4)


def test_out_of_memory_on_cuda_halves_the_batch(llama_lm, monkeypatch):
    sizes = []
    real = fluency._score_batch

    def tight_memory(lm, sequences):
        sizes.append(len(sequences))
        if len(sequences) > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(llama_lm, sequences)

    monkeypatch.setattr(fluency, "_score_batch", tight_memory)
    on_cuda = dataclasses.replace(llama_lm, device=torch.device("cuda"))

    scores = sentence_logprobs(on_cuda, TEXTS, batch_size=8)

    assert sizes[:2] == [7, 3]  # 7 fails, then 3 fails, then one at a time
    assert sizes[2:] == [1] * len(TEXTS)
    monkeypatch.undo()
    assert scores == pytest.approx(sentence_logprobs(llama_lm, TEXTS), abs=1e-4)


def test_out_of_memory_on_cpu_is_not_retried(llama_lm, monkeypatch):
    def no_memory(lm, sequences):
        raise torch.cuda.OutOfMemoryError("simulated")

    monkeypatch.setattr(fluency, "_score_batch", no_memory)
    with pytest.raises(torch.cuda.OutOfMemoryError):
        sentence_logprobs(llama_lm, TEXTS)


@pytest.fixture(scope="module")
def default_lm(tmp_path_factory) -> LoadedModel:
    cache = default_model_cache(tmp_path_factory)
    return load_causal_lm(DEFAULT_MODEL, device="cpu", cache_dir=cache)


@pytest.mark.slow
def test_real_model_prefers_the_fluent_sentence(default_lm):
    fluent, garbled = sentence_logprobs(
        default_lm, ["The movie was great.", "The movie was great great the was."]
    )
    assert fluent > garbled


@pytest.mark.slow
def test_real_model_drops_a_garbled_phrase_and_keeps_a_sensible_one(default_lm):
    original = "The acting was great and the story was thrilling."
    old = (original.index("great"), original.index("great") + len("great"))
    sensible = original.replace("great", "terrible")
    garbled = original.replace("great", "zxqv plorf gnib")
    items = [
        FluencyItem(original, sensible, ((old, (old[0], old[0] + len("terrible"))),)),
        FluencyItem(original, garbled, ((old, (old[0], old[0] + len("zxqv plorf gnib"))),)),
    ]

    kept, dropped = fluency_scores(default_lm, items)

    assert kept.passes(10.0)
    assert not dropped.passes(10.0)
    assert dropped.changed < -10


@pytest.mark.slow
def test_bf16_scores_of_the_real_model_agree_with_fp32(default_lm, tmp_path_factory):
    """What "auto" loads on a CPU with bf16 instructions: the fluency filter decides alike
    (docs/benchmarks.md measured 458 of 458 decisions equal on SNLI hypotheses)."""
    bf16 = load_causal_lm(
        DEFAULT_MODEL,
        device="cpu",
        dtype="bfloat16",
        cache_dir=default_model_cache(tmp_path_factory),
    )
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    original = "A man is playing a guitar on the stage."
    candidates = [
        "A woman is playing a guitar on the stage.",
        "A man is playing a violin on the stage.",
        "A man was playing a guitar on a stage.",
        "A man is not playing a guitar on the stage.",
        "A man is playing guitar a the on stage.",
        "Stage the on guitar a playing is man a.",
        "A man is zxqv plorf on the stage.",
    ]
    items = [FluencyItem(original, candidate) for candidate in candidates]
    exact, fast = fluency_scores(default_lm, items), fluency_scores(bf16, items)
    for a, b in zip(exact, fast, strict=True):
        assert b.full == pytest.approx(a.full, abs=1.0)
        assert b.passes(10.0) == a.passes(10.0)
    assert exact[0].passes(10.0) and not exact[4].passes(10.0)  # both decisions are exercised
