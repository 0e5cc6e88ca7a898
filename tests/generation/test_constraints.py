"""What the model may write (generation.constraints): the rule, the loop and the engines obey it."""

import logging

import pytest
import torch

from generation.constraints import (
    MARKER_STATES,
    advance,
    breaks_format,
    special_token_texts,
    writing_rule,
)
from generation.decoding import DecodingConfig, eos_token_ids, generate_continuations
from generation.engines import make_engine
from generation.models import load_causal_lm
from generation.strategies import FewShotStrategy, NativeStrategy, PromptRequest
from tests.generation.tiny_models import default_model_cache, tiny_lm_directory

GREEDY = DecodingConfig(do_sample=False, per_prompt=1, batch_size=8, seed=None)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny_lm(request, tmp_path_factory):
    return load_causal_lm(tiny_lm_directory(tmp_path_factory, request.param), device="cpu")


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_advance_follows_the_allowed_markers_only():
    assert advance("", " not [ANSWER] [EMPTY] [ANSWER]\n") == ""
    assert advance("", "so [ANS") == "[ANS"
    assert advance("[ANS", "WER] then") == ""
    for bad in ("[EQ]", "[OCT]", "[BLANK]", "[SEP]", "[negation]", "a ] b", "<|im_start|>", "[["):
        assert advance("", bad) is None, bad
    assert breaks_format("very [E Q]") and not breaks_format("very [EMP")


def test_the_rule_bans_special_tokens_and_allows_the_format(tiny_lm):
    tokenizer = tiny_lm.tokenizer
    ends = frozenset(eos_token_ids(tiny_lm))
    rule = writing_rule(tokenizer, ends)
    assert writing_rule(tokenizer, ends) is rule  # computed once per tokenizer
    outside = rule.allowed(torch.zeros(1, dtype=torch.long), rule.vocab_size)[0]
    for end in ends:
        assert all(rule.allowed(torch.tensor([state]), rule.vocab_size)[0, end] for state in (0, 3))
    for allowed in ("[ANSWER]", "[EMPTY]", "\n", " not"):
        assert all(outside[token] for token in _ids(tokenizer, allowed)[:1]), allowed
    banned = [tokenizer.convert_tokens_to_ids(t) for t in ("[SEP]", "[BLANK]", "[negation]")]
    banned += [tokenizer.convert_tokens_to_ids("<|perturb|>")]
    banned += [
        i for i in (tokenizer.pad_token_id, tokenizer.bos_token_id) if i not in ends | {None}
    ]
    assert banned and not any(outside[token] for token in banned)
    assert set(banned) <= set(rule.always_banned())
    # Inside "[", only a continuation of ANSWER] or EMPTY] may follow.
    inside = rule.allowed(torch.tensor([MARKER_STATES.index("[")]), rule.vocab_size)[0]
    for token in inside.nonzero().squeeze(-1).tolist():
        assert tokenizer.decode([token])[:1] in {"A", "E", ""} or token in ends, token
    # Ids past the tokenizer (a padded embedding) are never written.
    assert not rule.allowed(torch.zeros(1, dtype=torch.long), rule.vocab_size + 4)[0, -4:].any()


def _forced_to_break_the_format(lm):
    """Hook the head so that banned tokens (special ones, `[`, `E`, `Q`, `]`, `|`) lead by far."""
    tokenizer = lm.tokenizer
    favoured = set(_ids(tokenizer, "[EQ] | [OCT]"))
    favoured |= {tokenizer.convert_tokens_to_ids(t) for t in ("[SEP]", "[BLANK]", "<|perturb|>")}
    favoured |= {i for i in (tokenizer.pad_token_id, tokenizer.bos_token_id) if i is not None}
    bias = torch.zeros(lm.model.config.vocab_size)
    bias[sorted(favoured)] = 100.0
    bias[sorted(eos_token_ids(lm))] = -100.0  # and the row may not escape by ending
    return lm.model.get_output_embeddings().register_forward_hook(lambda m, i, out: out + bias)


PROMPTS = ["The movie was", "Two dogs <|perturb|> [negation] Two [BLANK] dogs [SEP]"]


@pytest.mark.parametrize("config", [GREEDY, DecodingConfig(per_prompt=4, seed=2)])
def test_the_loop_never_writes_a_banned_token_even_when_the_model_prefers_one(tiny_lm, config):
    hook = _forced_to_break_the_format(tiny_lm)
    try:
        outputs = generate_continuations(tiny_lm, PROMPTS, [12, 12], config)
    finally:
        hook.remove()
    specials = special_token_texts(tiny_lm.tokenizer) - {"[ANSWER]", "[EMPTY]"}
    for text in (text for texts in outputs for text in texts):
        assert text and not breaks_format(text), text
        assert not any(special in text for special in specials), text


def test_greedy_text_is_the_loops_in_continuous_batching_even_when_the_format_breaks(tiny_lm):
    hook = _forced_to_break_the_format(tiny_lm)
    try:
        outputs = {
            name: make_engine(name, lm=tiny_lm).generate(PROMPTS, [12, 12], GREEDY)
            for name in ("loop", "continuous")
        }
    finally:
        hook.remove()
    assert outputs["loop"] == outputs["continuous"]
    assert all(not breaks_format(texts[0]) for texts in outputs["continuous"])


@pytest.mark.slow
def test_sampled_candidates_of_the_packaged_model_hold_no_banned_marker(tmp_path_factory):
    from generation.models import default_model_directory

    lm = load_causal_lm(
        default_model_directory(default_model_cache(tmp_path_factory)), device="cpu"
    )
    requests = [
        PromptRequest(original, code, blanked)
        for original, blanked in [
            (
                "The food was cold and the staff were rude.",
                "The food was [BLANK] and the staff were rude.",
            ),
            ("A man is playing a guitar on stage.", "[BLANK]"),
            ("Two dogs run through a field.", "Two [BLANK] run through a [BLANK]."),
        ]
        for code in ("negation",)
    ]
    config = DecodingConfig(per_prompt=4, seed=7, temperature=1.3, top_p=1.0)
    specials = special_token_texts(lm.tokenizer)
    for strategy in (FewShotStrategy(), NativeStrategy()):
        outputs = generate_continuations(
            lm,
            [strategy.split(request) for request in requests],
            [24] * len(requests),
            config,
            answers_needed=[strategy.answers_needed(request) for request in requests],
            stop_at_newline=strategy.stops_at_newline,
        )
        for request, texts in zip(requests, outputs, strict=True):
            for text in texts:
                assert not breaks_format(text), text
                candidate = strategy.parse(request, text, specials)
                if candidate is not None:
                    assert not breaks_format(candidate) and "[" not in candidate, candidate


def test_continuous_batching_applies_the_static_ban_itself(tiny_lm, monkeypatch):
    """Tokens banned everywhere never come out of continuous batching, without our loop's
    second pass: transformers keeps the suppress-tokens processor in continuous batching,
    and the engine silences only its "might not be supported" notice."""
    from generation.engines import continuous

    tokenizer = tiny_lm.tokenizer
    banned = writing_rule(tokenizer, frozenset(eos_token_ids(tiny_lm))).always_banned()
    favoured = [tokenizer.convert_tokens_to_ids(t) for t in ("[SEP]", "[BLANK]", "<|perturb|>")]
    assert set(favoured) <= set(banned)
    bias = torch.zeros(tiny_lm.model.config.vocab_size)
    bias[favoured] = 100.0
    hook = tiny_lm.model.get_output_embeddings().register_forward_hook(lambda m, i, out: out + bias)

    def no_second_pass(*args, **kwargs):
        raise AssertionError("continuous batching let a token banned everywhere through")

    monkeypatch.setattr(continuous, "generate_continuations", no_second_pass)
    # transformers' continuous-batching logger does not propagate: listen to it directly.
    seen: list[str] = []
    listener = logging.Handler()
    listener.emit = lambda record: seen.append(record.getMessage())
    cb_logger = logging.getLogger("ContinuousBatchingLogger")
    cb_logger.addHandler(listener)
    try:
        outputs = make_engine("continuous", lm=tiny_lm).generate(PROMPTS, [8, 8], GREEDY)
    finally:
        hook.remove()
        cb_logger.removeHandler(listener)
    assert all(texts[0] and not breaks_format(texts[0]) for texts in outputs)
    assert not any("SuppressTokensLogitsProcessor" in message for message in seen), seen


@pytest.mark.parametrize("config", [GREEDY, DecodingConfig(per_prompt=4, seed=2)])
def test_continuous_batching_enforces_the_whole_rule_without_a_second_pass(
    tiny_lm, monkeypatch, config
):
    """Markers spelt over several tokens (`[`, `E`, `Q`, `]`) are banned inside continuous
    batching itself: no prompt goes back to our loop, and nothing it writes breaks the rule."""
    from generation.engines import continuous

    def no_second_pass(*args, **kwargs):
        raise AssertionError("continuous batching let a continuation break the rule")

    monkeypatch.setattr(continuous, "generate_continuations", no_second_pass)
    hook = _forced_to_break_the_format(tiny_lm)
    try:
        outputs = make_engine("continuous", lm=tiny_lm).generate(PROMPTS, [12, 12], config)
    finally:
        hook.remove()
    texts = [text for texts in outputs for text in texts]
    assert len(texts) == len(PROMPTS) * config.per_prompt
    assert all(text and not breaks_format(text) for text in texts), texts


def test_prompts_that_break_the_rule_without_it_in_the_manager_are_decoded_again(
    tmp_path_factory, monkeypatch, caplog
):
    """Asynchronous batching (CUDA) keeps its last token on the device, so the rule cannot
    run inside the manager: prompts whose continuations break it go back to our loop. The
    same on the CPU, with the rule left out of the manager as asynchronous batching leaves
    it: the redone prompts get the loop's text, each prompt's result is handed on once, and
    the results keep their prompts' order."""
    from generation.engines import continuous

    lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "llama"), device="cpu")
    monkeypatch.setattr(continuous, "_processor_first", lambda manager, processor: None)
    redone: list[list] = []

    def loop_again(lm_, prompts, *args, **kwargs):
        redone.append(list(prompts))
        return generate_continuations(lm_, prompts, *args, **kwargs)

    monkeypatch.setattr(continuous, "generate_continuations", loop_again)
    prompts, lengths = PROMPTS * 2, [1, 12, 1, 12]  # one token cannot break the format
    handed: dict[int, list] = {}
    hook = _forced_to_break_the_format(lm)
    try:
        with caplog.at_level(logging.INFO, logger="generation.engines.continuous"):
            outputs = make_engine("continuous", lm=lm).generate(
                prompts,
                lengths,
                GREEDY,
                on_result=lambda index, texts: handed.setdefault(index, []).append(texts),
            )
        loop = generate_continuations(lm, prompts, lengths, GREEDY)
    finally:
        hook.remove()

    assert redone == [[prompts[1], prompts[3]]]  # the long ones broke the rule
    assert "2 prompts broke the writing rule; our loop decodes them again" in caplog.text
    assert outputs == loop
    assert all(not breaks_format(texts[0]) for texts in outputs)
    assert handed == {index: [texts] for index, texts in enumerate(outputs)}


class _Request:
    def __init__(self, request_id: str, tokens: list[int]) -> None:
        self.request_id, self.generated_tokens = request_id, tokens


def test_the_rule_processor_reads_each_requests_new_tokens_once(tiny_lm):
    from generation.engines.continuous import WritingRuleProcessor

    tokenizer = tiny_lm.tokenizer
    rule = writing_rule(tokenizer, frozenset(eos_token_ids(tiny_lm)))
    processor = WritingRuleProcessor(rule, torch.device("cpu"))
    assert "allowed_table" in vars(processor.rule)  # built before any CUDA graph capture
    opened = _ids(tokenizer, " so [")
    assert advance("", tokenizer.decode(opened)) == "["
    request = _Request("r1", list(opened))
    assert processor.state_of(request) == MARKER_STATES.index("[")
    request.generated_tokens += _ids(tokenizer, "ANSWER]")
    assert processor.state_of(request) == 0  # the marker closed
    assert processor.seen["r1"] == (0, len(request.generated_tokens))
    # Another request starts outside, whatever the first one wrote.
    assert processor.state_of(_Request("r2", [])) == 0
    # Its mask: inside "[", only the allowed markers' next letters (or an end) may follow.
    states = processor.prepare_tensor_args([type("F", (), {"state": _Request("r3", opened)})])
    scores = processor(torch.zeros(1, rule.vocab_size), states)
    assert torch.equal(
        scores[0] > float("-inf"),
        rule.allowed(torch.tensor([MARKER_STATES.index("[")]), rule.vocab_size)[0],
    )


class _FakeManager:
    def __init__(self, asynchronous: bool) -> None:
        from transformers.generation.continuous_batching.cb_logits_processors import (
            ContinuousBatchingLogitsProcessorList,
        )
        from transformers.generation.logits_process import LogitsProcessorList

        self.continuous_batching_config = type("C", (), {"use_async_batching": asynchronous})()
        self.logit_processor = ContinuousBatchingLogitsProcessorList(LogitsProcessorList())
        self.calls: list[str] = []

    def start(self):
        self.calls.append("start")

    def stop(self, block, timeout):
        self.calls.append("stop")

    def destroy(self):
        self.calls.append("destroy")


@pytest.mark.parametrize("asynchronous", [False, True])
def test_the_manager_gets_the_rule_unless_its_batching_is_asynchronous(tiny_lm, asynchronous):
    from generation.engines.continuous import WritingRuleProcessor, _manager_running

    manager = _FakeManager(asynchronous)
    model = type("M", (), {"device": torch.device("cpu")})()
    model.init_continuous_batching = lambda **options: manager
    model.get_output_embeddings = tiny_lm.model.get_output_embeddings
    rule = writing_rule(tiny_lm.tokenizer, frozenset(eos_token_ids(tiny_lm)))
    with (
        pytest.raises(RuntimeError, match="the caller failed"),
        _manager_running(model, None, None, None, rule),
    ):
        assert manager.calls == ["start"]
        raise RuntimeError("the caller failed")
    assert manager.calls == ["start", "stop", "destroy"]  # stopped even so
    processors = manager.logit_processor
    installed = [p for p in processors.logits_processor if isinstance(p, WritingRuleProcessor)]
    # With asynchronous batching a request's last token is still on the device: the host
    # cannot step its state, so only the static ban (suppress_tokens) applies.
    assert len(installed) == (0 if asynchronous else 1)
    assert processors.tensors_required == len(installed)
    assert processors.do_processing is (not asynchronous)
