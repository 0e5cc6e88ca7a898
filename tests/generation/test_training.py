import json
import math
import random

import pytest
import torch
from safetensors.torch import load_file
from tokenizers import ByteLevelBPETokenizer
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast
from transformers.pytorch_utils import Conv1D

from generation.models import load_causal_lm
from generation.pairs import Pair
from generation.parsing import ParseCache
from generation.prompts import fill_blanks, parse_answers
from generation.strategies import strategy_for
from generation.tokens import CODE_TOKENS, CONTROL_CODES, GLOBAL, PERTURB, SEP, SPECIAL_TOKENS
from generation.training import (
    BestCheckpoint,
    EarlyStopping,
    TrainingConfig,
    TrainingExample,
    TrainingReport,
    _collate,
    _encode,
    _eval_batches,
    _eval_loss,
    _optimizer,
    add_polyjuice_tokens,
    build_examples,
    epoch_batches,
    pair_examples,
    resolve_precision,
    split_pairs,
    train,
    useful_share,
)
from tests.generation.tiny_models import build_tiny_tokenizer, tiny_lm_directory

PAIRS = [
    Pair("It is great for kids.", "It is not great for kids."),
    Pair("The movie was great.", "The movie was terrible."),
    Pair("A man is playing a guitar.", "Two men are playing a guitar."),
    Pair("The very old bridge was closed.", "The bridge was closed."),
    Pair("The story was thin.", "The story was rich."),
    Pair("Some people liked the music.", "All people liked the music."),
    Pair("The acting was wonderful.", "The acting was not wonderful."),
    Pair("Two dogs are running.", "A dog is running."),
    Pair("The ending was terrible.", "The ending was great."),
    Pair("It is a good film.", "It is a bad film."),
    Pair("The dog chased the cat.", "The cat chased the dog."),
    Pair("She liked the hotel.", "She liked the small hotel."),
]


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


@pytest.fixture
def one_torch_thread():
    """A tiny model gains nothing from threads, and a CPU shared with another job makes their
    synchronisation cost ten times the work; one thread keeps the training test near 2 s."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _blanked(example: TrainingExample, x: str) -> str:
    """The blanked x̂ of a prompt `x <|perturb|> [code] blanked [SEP]`."""
    prefix = f"{x} {PERTURB} [{example.code}] "
    assert example.prompt.startswith(prefix), example.prompt
    assert example.prompt.endswith(f" {SEP}"), example.prompt
    return example.prompt[len(prefix) : -len(f" {SEP}")]


def tiny_config(tmp_path_factory, output, **options) -> TrainingConfig:
    """Training of the tiny GPT-2 on the CPU, fast enough for a test; `options` replace these
    (fp32, so that losses are the same on CPUs with and without bf16 arithmetic)."""
    settings = {
        "base_model": str(tiny_lm_directory(tmp_path_factory, "gpt2")),
        "output": output,
        "batch_size": 4,
        "learning_rate": 5e-3,
        "max_length": 64,
        "device": "cpu",
        "precision": "fp32",
    }
    return TrainingConfig(**{**settings, **options})


@pytest.mark.parametrize("pair", PAIRS[:4], ids=lambda pair: pair.x_hat)
def test_answers_filled_into_the_blanks_give_x_hat_back(parses, pair):
    examples = pair_examples(parses.parse(pair.x), parses.parse(pair.x_hat))

    assert 1 <= len(examples) <= 4
    assert len({example.prompt for example in examples}) == len(examples)
    for example in examples:
        blanked = _blanked(example, pair.x)
        answers = parse_answers(example.answer, blanked.count("[BLANK]"))
        assert answers is not None, example.answer
        assert fill_blanks(blanked, answers) == pair.x_hat
        assert example.text == f"{example.prompt} {example.answer}"


def test_blankings_go_from_the_changed_tokens_to_the_whole_sentence(parses):
    examples = pair_examples(
        parses.parse("It is great for kids."), parses.parse("It is not great for kids.")
    )

    blanked = [_blanked(example, "It is great for kids.") for example in examples]
    assert blanked[0] == "It is [BLANK] great for kids."
    assert examples[0].answer == "not [ANSWER]"
    assert blanked[-1] == "[BLANK]"
    assert examples[-1].answer == "It is not great for kids. [ANSWER]"


def test_the_code_comes_from_the_detector(parses):
    negation = pair_examples(
        parses.parse("It is great for kids."), parses.parse("It is not great for kids.")
    )
    quantifier = pair_examples(
        parses.parse("A man is playing a guitar."), parses.parse("Two men are playing a guitar.")
    )

    assert {example.code for example in negation} == {"negation"}
    assert all("[negation]" in example.prompt for example in negation)
    assert {example.code for example in quantifier} == {"quantifier"}


def test_a_deletion_is_answered_with_empty(parses):
    examples = pair_examples(
        parses.parse("It is not great for kids."), parses.parse("It is great for kids.")
    )

    assert examples[0].answer == "[EMPTY] [ANSWER]"
    assert _blanked(examples[0], "It is not great for kids.") == "It is [BLANK] great for kids."


def test_identical_texts_give_no_examples(parses):
    doc = parses.parse("It is great for kids.")

    assert pair_examples(doc, doc) == []
    assert build_examples([Pair("Same.", "Same."), Pair("", "Something.")], parses=parses) == []


def test_the_pool_makes_the_prompts_this_process_makes(parses, monkeypatch):
    from generation import annotation_pool, training

    monkeypatch.setattr(training, "EXAMPLE_CHUNK_PAIRS", 3)  # several tasks, order kept
    try:
        for both in (True, False):
            pooled = training.build_examples_pooled(PAIRS, both_directions=both, workers=2)
            assert pooled == build_examples(PAIRS, both_directions=both, parses=parses)
            assert pooled
    finally:
        annotation_pool.shutdown()


def test_prompts_of_many_pairs_are_made_by_workers(monkeypatch):
    from generation import annotation_pool, training

    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "3")
    assert training.example_workers(training.POOLED_MIN_PAIRS) == 3
    assert training.example_workers(training.POOLED_MIN_PAIRS - 1) == 0
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "0")  # asked to stay in process
    assert training.example_workers(10 * training.POOLED_MIN_PAIRS) == 0


def test_worker_nlp_is_only_for_the_pool_workers():
    from generation import annotation_pool

    with pytest.raises(RuntimeError, match="only for functions running in the pool"):
        annotation_pool.worker_nlp()


def test_build_examples_uses_both_directions_unless_told_not_to(parses):
    pair = Pair("It is great for kids.", "It is not great for kids.")

    both = build_examples([pair], parses=parses)
    forward = build_examples([pair], both_directions=False, parses=parses)

    assert {example.prompt.split(f" {PERTURB}")[0] for example in both} == {pair.x, pair.x_hat}
    assert {example.prompt.split(f" {PERTURB}")[0] for example in forward} == {pair.x}
    assert forward == both[: len(forward)]
    assert len(both) > len(forward)


def _plain_tokenizer_and_model():
    """A GPT-2-like tokenizer and model that know nothing of the Polyjuice vocabulary."""
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        ["The movie was great.", "It is not bad."],
        vocab_size=300,
        min_frequency=1,
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>")
    model = GPT2LMHeadModel(
        GPT2Config(vocab_size=len(tokenizer), n_positions=32, n_embd=8, n_layer=1, n_head=1)
    )
    return tokenizer, model


def test_add_polyjuice_tokens_adds_them_once():
    tokenizer, model = _plain_tokenizer_and_model()
    assert strategy_for("auto", tokenizer).name == "fewshot"

    first = add_polyjuice_tokens(tokenizer, model)
    size = model.get_input_embeddings().weight.shape[0]
    second = add_polyjuice_tokens(tokenizer, model)

    assert first == len(SPECIAL_TOKENS) + len(CODE_TOKENS)
    assert second == 0
    assert size == len(tokenizer) == model.get_input_embeddings().weight.shape[0]
    assert all(len(tokenizer.tokenize(token)) == 1 for token in (*SPECIAL_TOKENS, *CODE_TOKENS))
    assert tokenizer.pad_token == tokenizer.eos_token
    assert strategy_for("auto", tokenizer).name == "native"


def test_training_on_many_pairs_makes_its_prompts_in_the_pool(
    tmp_path_factory, tmp_path, monkeypatch, one_torch_thread
):
    """The same run as in one process, its prompts made by the workers."""
    from generation import annotation_pool, training

    def run(name: str) -> TrainingReport:
        config = tiny_config(tmp_path_factory, tmp_path / name, epochs=1)
        return train(config, PAIRS, show_progress=False)

    alone = run("alone")
    pooled_calls = []
    pooled = training.build_examples_pooled
    monkeypatch.setattr(training, "POOLED_MIN_PAIRS", 1)
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "2")
    monkeypatch.setattr(
        training,
        "build_examples_pooled",
        lambda *args, **kwargs: pooled_calls.append(kwargs) or pooled(*args, **kwargs),
    )
    try:
        in_pool = run("pooled")
    finally:
        annotation_pool.shutdown()

    assert [call["workers"] for call in pooled_calls] == [2, 2]  # train and held-out pairs
    assert (in_pool.examples, in_pool.codes) == (alone.examples, alone.codes)
    assert in_pool.eval_loss_before == pytest.approx(alone.eval_loss_before)
    assert in_pool.eval_loss_after == pytest.approx(alone.eval_loss_after)


def test_training_without_usable_pairs_is_refused(tmp_path):
    config = TrainingConfig(base_model=str(tmp_path / "unused"), output=tmp_path / "out")

    with pytest.raises(ValueError, match="No training prompts"):
        train(config, [Pair("Same.", "Same.")], show_progress=False)
    assert not (tmp_path / "out").exists()


def test_tiny_training_run_lowers_the_loss_and_saves_a_native_model(
    tmp_path_factory, tmp_path, one_torch_thread
):
    output = tmp_path / "out"
    # Three evaluations cannot run out of a patience of three.
    config = tiny_config(tmp_path_factory, output, epochs=3, patience=3)

    report = train(config, PAIRS, show_progress=False)

    assert report.pairs == len(PAIRS)
    # Twelve pairs, both ways, up to four blankings each; one whole pair held out.
    assert report.examples >= 40
    assert (report.train_pairs, report.eval_pairs) == (11, 1)
    assert 0 < report.eval_examples <= 8
    assert 0 < report.train_examples <= report.examples - report.eval_examples
    assert report.steps == math.ceil(report.train_examples / config.batch_size) * config.epochs
    # One evaluation per epoch; none stopped the run.
    assert [evaluation.epoch for evaluation in report.evaluations] == [1, 2, 3]
    assert not report.stopped_early
    assert sum(report.codes.values()) == report.examples
    assert set(report.codes) <= {*CONTROL_CODES, GLOBAL}
    assert {"negation", "quantifier", "lexical"} <= set(report.codes)
    assert report.eval_loss_after < report.eval_loss_before

    trained = load_causal_lm(output, device="cpu")
    assert strategy_for("auto", trained.tokenizer, str(trained.name)).name == "native"
    saved = json.loads((output / "cfannotate_training.json").read_text())
    assert saved["examples"] == report.examples
    assert saved["evaluations"][0]["step"] == report.evaluations[0].step
    assert saved["eval_loss_after"] == pytest.approx(report.eval_loss_after)
    assert saved["output"] == str(output)


def _encode_one_by_one(tokenizer, examples, max_length):
    """What `_encode` gives, one tokenizer call per text, as it was first written."""
    encoded = []
    for example in examples:
        ids = tokenizer(
            example.text + tokenizer.eos_token,
            add_special_tokens=False,
            truncation=True,
            max_length=max_length,
        )["input_ids"]
        context = example.prompt[: example.prompt.index(PERTURB) + len(PERTURB)]
        context_ids = tokenizer(context, add_special_tokens=False)["input_ids"]
        if len(context_ids) < len(ids) and ids[: len(context_ids)] == context_ids:
            encoded.append(
                {"input_ids": ids, "labels": [-100] * len(context_ids) + ids[len(context_ids) :]}
            )
    return encoded


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
@pytest.mark.parametrize("max_length", [64, 12])
def test_batched_encoding_is_what_one_text_at_a_time_gives(parses, kind, max_length):
    tokenizer = build_tiny_tokenizer(kind)
    examples = build_examples(PAIRS, parses=parses)

    encoded = _encode(tokenizer, examples, max_length)

    assert encoded == _encode_one_by_one(tokenizer, examples, max_length)
    if max_length == 12:  # x alone fills 12 tokens of the longer prompts: those are left out
        assert 0 < len(encoded) < len(examples)
    assert _encode(tokenizer, [], max_length) == []


def test_held_out_loss_is_the_same_in_any_batches_shortest_first(tmp_path_factory, parses):
    lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")
    items = _encode(lm.tokenizer, build_examples(PAIRS, parses=parses), 64)
    pad_id = lm.tokenizer.pad_token_id or 0
    by_fours = [_collate(items[start : start + 4], pad_id) for start in range(0, len(items), 4)]

    batches = _eval_batches(items, 16, pad_id)

    assert len(batches) == math.ceil(len(items) / 16)
    widths = [batch["input_ids"].shape[1] for batch in batches]
    assert widths == sorted(widths)  # shortest first: less padding than in the given order
    in_order = [_collate(items[start : start + 16], pad_id) for start in range(0, len(items), 16)]
    assert _padding(batches) < _padding(in_order)
    assert _eval_loss(lm.model, batches, lm.device) == pytest.approx(
        _eval_loss(lm.model, by_fours, lm.device), rel=1e-5
    )


def _padding(batches: list[dict]) -> int:
    return sum(int((batch["attention_mask"] == 0).sum()) for batch in batches)


class WallClock:
    """A wall clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_best_checkpoint_writes_at_most_every_interval_and_the_best_at_the_end():
    model = torch.nn.Linear(2, 1)
    written = []
    wall = WallClock()
    checkpoints = BestCheckpoint(
        model, lambda: written.append(model.weight.detach().clone()), every=60.0, wall=wall
    )

    def improve_to(value: float, at: float) -> None:
        wall.now = at
        with torch.no_grad():
            model.weight.fill_(value)
        checkpoints.improved()

    improve_to(1.0, at=0.0)  # the first improvement is written at once
    improve_to(2.0, at=10.0)  # 10 s later: kept in memory
    improve_to(3.0, at=20.0)
    with torch.no_grad():
        model.weight.fill_(9.0)  # later, worse weights
    assert [float(weights[0, 0]) for weights in written] == [1.0]

    checkpoints.finish()

    assert [float(weights[0, 0]) for weights in written] == [1.0, 3.0]
    assert float(model.weight.detach()[0, 0]) == 3.0  # the best weights are back in the model
    assert checkpoints.writes == 2

    improve_to(4.0, at=100.0)  # 80 s after the last write: written at once
    checkpoints.finish()  # nothing newer to write
    assert [float(weights[0, 0]) for weights in written] == [1.0, 3.0, 4.0]


def test_a_checkpoint_interval_of_zero_writes_every_improvement():
    model = torch.nn.Linear(2, 1)
    written = []
    checkpoints = BestCheckpoint(model, lambda: written.append(1), every=0.0, wall=WallClock())
    for _ in range(3):
        checkpoints.improved()
    checkpoints.finish()
    assert len(written) == 3 and checkpoints.kept is None


# --------------------------------------------------------------------------- held-out split


def test_split_pairs_holds_out_whole_pairs_and_none_of_a_few():

    pairs = [Pair(f"Sentence {n}.", f"Sentence {n} changed.") for n in range(40)]
    train_pairs, held_out = split_pairs(pairs, 0.1, random.Random(0))
    assert len(held_out) == 4 and len(train_pairs) == 36
    assert set(train_pairs) | set(held_out) == set(pairs)
    assert not set(train_pairs) & set(held_out)
    few, none = split_pairs(pairs[:9], 0.5, random.Random(0))  # below MIN_PAIRS_FOR_EVAL
    assert len(few) == 9 and none == []


def test_the_optimizer_is_fused_adamw_with_warm_up_and_decay(tmp_path_factory, tmp_path):
    config = tiny_config(tmp_path_factory, tmp_path / "out", learning_rate=1.0, warmup_ratio=0.1)
    model = load_causal_lm(config.base_model, device="cpu").model
    optimizer, scheduler = _optimizer(model, config, total_steps=20)
    assert isinstance(optimizer, torch.optim.AdamW) and optimizer.defaults["fused"]
    rates = []
    for _ in range(20):
        rates.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    assert rates[0] == pytest.approx(0.5) and rates[1] == pytest.approx(1.0)  # 2 warm-up steps
    assert rates[2:] == sorted(rates[2:], reverse=True) and rates[-1] == pytest.approx(1 / 18)


def test_early_stopping_counts_evaluations_since_the_best():
    stopping = EarlyStopping(patience=2, min_delta=0.1)
    assert stopping.update(3.0) and not stopping.done
    assert stopping.update(2.5)
    assert not stopping.update(2.45)  # not better by min_delta
    assert not stopping.done
    assert not stopping.update(2.6)
    assert stopping.done and stopping.best == 2.5


@pytest.mark.parametrize(
    "options",
    [
        {"patience": 0},
        {"eval_fraction": 1.0},
        {"eval_every": -1},
        {"epochs": 0},
        {"time_limit": 0},
        {"time_limit": -5.0},
        {"eval_batch_size": 0},
        {"checkpoint_every": -1.0},
        {"checkpoint_every": float("nan")},
        {"precision": "fp16"},
    ],
)
def test_training_config_refuses_bad_values(tmp_path, options):
    with pytest.raises(ValueError):
        TrainingConfig(base_model="unused", output=tmp_path, **options)


@pytest.mark.parametrize("checkpoint_every", [0.0, 300.0], ids=["each-better", "in-memory"])
def test_training_stops_early_and_keeps_the_best_checkpoint(
    tmp_path_factory, tmp_path, one_torch_thread, checkpoint_every
):

    output = tmp_path / "out"
    # A learning rate far too high makes the held-out loss climb after the first steps.
    config = tiny_config(
        tmp_path_factory,
        output,
        epochs=20,
        learning_rate=3.0,
        warmup_ratio=0.0,
        eval_fraction=0.25,
        eval_every=1,
        patience=2,
        checkpoint_every=checkpoint_every,
    )

    report = train(config, PAIRS, show_progress=False)

    assert report.stopped_early
    losses = [evaluation.loss for evaluation in report.evaluations]
    best = losses.index(min(losses))
    assert report.best_step == report.evaluations[best].step < report.steps
    assert len(losses) == best + 1 + config.patience  # stopped `patience` evaluations later
    assert report.eval_loss_after == min(losses)
    # The saved model is the best one: its held-out loss is the best loss measured.
    _, held_out = split_pairs(PAIRS, config.eval_fraction, random.Random(config.seed))
    saved = load_causal_lm(output, device="cpu")
    items = _encode(saved.tokenizer, build_examples(held_out), config.max_length)
    batches = [
        _collate(items[start : start + 4], saved.tokenizer.pad_token_id or 0)
        for start in range(0, len(items), 4)
    ]
    assert _eval_loss(saved.model, batches, saved.device) == pytest.approx(min(losses), rel=1e-4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_training_on_cuda_lowers_the_loss_and_keeps_the_best_checkpoint(tmp_path_factory, tmp_path):
    """The GPU path: batches through pinned memory, bf16 autocast, the held-out loss summed
    on the device (`bash bench/gpu/run.sh check` runs this on the device machine)."""
    output = tmp_path / "out"
    config = tiny_config(
        tmp_path_factory, output, device="cuda", epochs=3, patience=3, precision="auto"
    )

    report = train(config, PAIRS, show_progress=False)

    assert report.precision == ("bf16" if torch.cuda.is_bf16_supported() else "fp32")
    assert report.eval_loss_after < report.eval_loss_before
    assert report.eval_loss_after == min(evaluation.loss for evaluation in report.evaluations)
    saved = load_causal_lm(output, device="cuda")
    _, held_out = split_pairs(PAIRS, config.eval_fraction, random.Random(config.seed))
    items = _encode(saved.tokenizer, build_examples(held_out), config.max_length)
    batches = _eval_batches(items, 4, saved.tokenizer.pad_token_id or 0)
    assert _eval_loss(saved.model, batches, saved.device, report.precision) == pytest.approx(
        report.eval_loss_after, rel=1e-3
    )


@pytest.mark.parametrize(
    ("precision", "cpu_bf16", "resolved"),
    [
        ("auto", True, "bf16"),
        ("auto", False, "fp32"),
        ("fp32", True, "fp32"),
        ("bf16", False, "bf16"),  # asked for: emulated, slow, but what was asked
    ],
)
def test_precision_auto_is_bf16_on_a_cpu_with_bf16_arithmetic(
    monkeypatch, precision, cpu_bf16, resolved
):
    monkeypatch.setattr("generation.models.cpu_computes_bf16", lambda: cpu_bf16)

    assert resolve_precision(torch.device("cpu"), precision) == resolved


def test_an_unknown_precision_is_refused():
    with pytest.raises(ValueError, match="auto, bf16, fp32"):
        resolve_precision(torch.device("cpu"), "fp16")


class DtypeRecorder:
    """The dtypes the tiny GPT-2's projections compute in, in training and in evaluation."""

    def __init__(self) -> None:
        self.seen: dict[bool, set[torch.dtype]] = {True: set(), False: set()}

    def __call__(self, module, inputs, output) -> None:
        if isinstance(module, Conv1D):
            self.seen[module.training].add(output.dtype)


@pytest.mark.parametrize(
    ("precision", "dtype"), [("bf16", torch.bfloat16), ("fp32", torch.float32)]
)
def test_training_computes_in_the_precision_asked_over_fp32_weights(
    tmp_path_factory, tmp_path, one_torch_thread, precision, dtype
):
    output = tmp_path / "out"
    config = tiny_config(tmp_path_factory, output, epochs=3, patience=3, precision=precision)
    recorder = DtypeRecorder()
    hook = torch.nn.modules.module.register_module_forward_hook(recorder)
    try:
        report = train(config, PAIRS, show_progress=False)
    finally:
        hook.remove()

    assert (report.precision, report.device) == (precision, "cpu")
    assert recorder.seen == {True: {dtype}, False: {dtype}}  # the steps and the held-out loss
    assert report.eval_loss_after < report.eval_loss_before
    weights = load_file(output / "model.safetensors")  # the optimizer's fp32 weights
    assert {tensor.dtype for tensor in weights.values()} == {torch.float32}
    stored = json.loads((output / "cfannotate_training.json").read_text())
    assert stored["precision"] == precision


def _items(lengths: list[int]) -> list[dict]:
    return [
        {"input_ids": [index] * length, "labels": [index] * length}
        for index, length in enumerate(lengths)
    ]


def test_the_share_of_positions_that_are_prompt():
    short, long = {"input_ids": [1] * 2}, {"input_ids": [1] * 6}
    assert useful_share([[short, long]]) == 8 / 12
    assert useful_share([[short, short], [long]]) == 1.0


@pytest.mark.parametrize("group_by_length", [True, False], ids=["grouped", "random"])
def test_an_epoch_batches_every_item_once(group_by_length):
    items = _items([random.Random(index).randint(20, 120) for index in range(2_003)])

    batches = epoch_batches(items, 16, random.Random(0), group_by_length=group_by_length)

    assert len(batches) == math.ceil(len(items) / 16)
    assert sorted(item["input_ids"][0] for batch in batches for item in batch) == list(
        range(len(items))
    )
    assert sorted(len(batch) for batch in batches)[1:] == [16] * (len(batches) - 1)
    again = epoch_batches(items, 16, random.Random(0), group_by_length=group_by_length)
    assert again == batches  # the seed decides the order
    assert epoch_batches(items, 16, random.Random(1), group_by_length=group_by_length) != batches


def test_grouped_batches_are_nearly_all_prompt_and_the_longest_comes_first():
    # Lengths spread as CAD's prompts are (24 to 120 tokens, most near 50).
    rng = random.Random(0)
    items = _items([min(120, max(24, int(rng.lognormvariate(3.9, 0.35)))) for _ in range(20_000)])

    grouped = epoch_batches(items, 16, random.Random(0), group_by_length=True)
    in_random_order = epoch_batches(items, 16, random.Random(0), group_by_length=False)

    assert useful_share(grouped) > 0.95
    assert useful_share(in_random_order) < 0.75
    widths = [max(len(item["input_ids"]) for item in batch) for batch in grouped]
    assert widths[0] == max(widths)  # a batch too big for the device fails at step one
    assert widths[1:] != sorted(widths[1:])  # the rest in random order, not by length
    assert grouped[0] != in_random_order[0]


@pytest.mark.parametrize(("count", "group"), [(543, 16), (4_000, 192), (40_000, 800)])
def test_a_group_is_a_small_share_of_the_prompts(count, group):
    """Sorted groups of most of a small set's prompts would fill batches with the prompts
    of a few pairs (they have nearly the same length): a group holds 1/20 of them at most."""
    items = _items([20 + index % 100 for index in range(count)])
    shuffled = list(items)
    random.Random(0).shuffle(shuffled)  # as `epoch_batches` shuffles them first
    group_of = {item["input_ids"][0]: position // group for position, item in enumerate(shuffled)}

    batches = epoch_batches(items, 16, random.Random(0), group_by_length=True)

    for batch in batches:  # every batch holds the items of one group
        assert len({group_of[item["input_ids"][0]] for item in batch}) == 1
    if group > 16:  # and the groups were sorted: far less padding than the shuffled order
        in_order = [shuffled[start : start + 16] for start in range(0, count, 16)]
        assert useful_share(batches) > useful_share(in_order) + 0.1


def test_without_grouping_an_epoch_is_the_items_shuffled_and_cut():
    items = _items(list(range(1, 38)))
    rng = random.Random(5)
    expected = list(items)
    rng.shuffle(expected)

    batches = epoch_batches(items, 8, random.Random(5), group_by_length=False)

    assert batches == [expected[start : start + 8] for start in range(0, 37, 8)]
    assert items == _items(list(range(1, 38)))  # the caller's list is left as it was


class StepClock:
    """A clock that advances one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_training_stops_at_the_time_limit_and_keeps_the_best_checkpoint(
    tmp_path_factory, tmp_path, one_torch_thread
):
    output = tmp_path / "out"
    # Far more epochs than the limit allows, and a patience that never runs out.
    config = tiny_config(
        tmp_path_factory, output, epochs=50, eval_every=3, patience=100, time_limit=8.0
    )

    report = train(config, PAIRS, show_progress=False, clock=StepClock())

    # The clock is read once at the start and once after each step: the step that reads
    # 8 or more seconds past the start is the last one.
    assert report.out_of_time and not report.stopped_early
    assert report.steps == 8
    # Evaluations every three steps, then one after the last step, which saved the best.
    assert [evaluation.step for evaluation in report.evaluations] == [3, 6, 8]
    assert report.best_step in {3, 6, 8}
    assert report.eval_loss_after == min(e.loss for e in report.evaluations)
    saved = json.loads((output / "cfannotate_training.json").read_text())
    assert saved["out_of_time"] is True and saved["steps"] == 8
    assert load_causal_lm(output, device="cpu").name


def test_without_a_time_limit_the_clock_never_ends_training(
    tmp_path_factory, tmp_path, one_torch_thread
):
    config = tiny_config(tmp_path_factory, tmp_path / "out", epochs=2)
    clock = StepClock()
    clock.now = 1e9  # as if days had passed

    report = train(config, PAIRS, show_progress=False, clock=clock)

    assert not report.out_of_time
    assert report.steps == math.ceil(report.train_examples / config.batch_size) * 2
