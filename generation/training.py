"""Fine-tunes a causal LM into the Polyjuice format from paired data (Polyjuice Appendix A.2).

Every pair is used both ways, (x, x̂) and (x̂, x). For each direction the primary
control code comes from our detector, and up to four prompts are made with
different blanks in x̂: (1) just the changed tokens, (2) their parse subtrees,
(3) one blank over the merged changes, (4) the whole sentence. A training text is
`x <|perturb|> [code] blanked [SEP] a1 [ANSWER] ... <eos>`; the loss covers what
follows <|perturb|>, so the model learns codes, blanks and answers, not to copy x.
Whole pairs are held out (`eval_fraction`) before any prompt is made; the loss on
their prompts is measured each epoch or every `eval_every` steps, the model is kept
whenever it improves (written at most every `checkpoint_every` seconds, held in memory
in between, and written at the end), and training stops after `patience` evaluations
without improvement, so the output holds the best checkpoint. The forward passes run
under bf16 autocast over fp32 weights where the device computes in bf16 (`precision`).
The output directory also holds `cfannotate_training.json`, which tells the generator to
prompt it in the native format. The command line is `training_cli.py`.
"""

import json
import logging
import math
import random
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from generation import annotation_pool
from generation.blanks import BlankSet, BlankSpan, blanked_text
from generation.control_codes import detect_code
from generation.edits import compute_edit
from generation.pairs import Pair
from generation.parsing import SPACY_MODEL, ParseCache
from generation.prompts import build_answer, build_prompt, fill_blanks
from generation.strategies import TRAINING_REPORT
from generation.tokens import CODE_TOKENS, PERTURB, SPECIAL_TOKENS

logger = logging.getLogger(__name__)

# From this many pairs on, prompts are made in the annotation pool's worker processes.
POOLED_MIN_PAIRS = 512
EXAMPLE_CHUNK_PAIRS = 128  # pairs per task: each worker parses them in one batch


@dataclass(frozen=True)
class TrainingExample:
    prompt: str  # x <|perturb|> [code] blanked [SEP]
    answer: str  # a1 [ANSWER] a2 [ANSWER]
    code: str

    @property
    def text(self) -> str:
        return f"{self.prompt} {self.answer}"


# Mixed precision: "bf16" runs the forward passes under bf16 autocast (matmuls in bf16,
# losses and softmaxes in fp32) over fp32 weights; "fp32" computes everything in fp32.
PRECISIONS = ("auto", "bf16", "fp32")


@dataclass(frozen=True)
class TrainingConfig:
    base_model: str
    output: Path
    epochs: int = 3  # A.2: 3 epochs; early stopping may end sooner
    learning_rate: float = 5e-5  # A.2: 5e-5
    batch_size: int = 16  # A.2: 16
    max_length: int = 120  # A.2: sequence length 120
    warmup_ratio: float = 0.05
    # Share of the pairs held out (whole pairs, so no direction or blanking of a held-out
    # pair is trained on); none below MIN_PAIRS_FOR_EVAL pairs.
    eval_fraction: float = 0.05
    eval_every: int = 0  # optimizer steps between held-out evaluations; 0: once per epoch
    patience: int = 2  # evaluations without a better held-out loss before stopping
    min_delta: float = 0.0  # how much lower a held-out loss must be to count as better
    device: str = "auto"
    seed: int = 0
    both_directions: bool = True
    # Plain-text markers (as the published Polyjuice model learned them) reuse embeddings
    # the model already has; new special tokens start untrained and, in a short CPU run
    # on CAD (docs/benchmarks.md), were never emitted. Opt in for long GPU runs.
    add_special_tokens: bool = False
    # Seconds from the start of `train` after which training stops at the next optimizer
    # step (a GPU slot's length); the last held-out evaluation and the save follow. None:
    # no limit. The learning-rate schedule still spans every epoch.
    time_limit: float | None = None
    # Held-out prompts per forward pass, shortest first: without gradients many more fit
    # than in a training batch, and on a GPU each pass costs mostly its launch.
    eval_batch_size: int = 64
    # Seconds between writes of a better checkpoint to `output` (about 2 s each for
    # SmolLM2-135M): in between, the best weights are kept in memory; they are written at
    # the end in any case. 0: each better checkpoint is written at once.
    checkpoint_every: float = 300.0
    # What the forward passes compute in (`PRECISIONS`); the weights and the optimizer stay
    # fp32. "auto": bf16 on a GPU or CPU with bf16 arithmetic, fp32 elsewhere.
    precision: str = "auto"
    # Batches of prompts of similar length (`epoch_batches`): 56 % of a random batch's
    # tokens are prompt, the rest padding, on CAD; 98 % of a grouped one's.
    group_by_length: bool = True

    def __post_init__(self) -> None:
        if min(self.epochs, self.batch_size, self.max_length, self.eval_batch_size) < 1:
            raise ValueError("epochs, batch sizes and max length must be at least 1")
        if not 0 <= self.eval_fraction < 1:
            raise ValueError("the held-out fraction must be in [0, 1)")
        if self.eval_every < 0 or self.patience < 1:
            raise ValueError("eval_every must be 0 or more and patience at least 1")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ValueError("the time limit must be more than 0 seconds")
        if not self.checkpoint_every >= 0:
            raise ValueError("checkpoint_every must be 0 seconds or more")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")


MIN_PAIRS_FOR_EVAL = 10  # fewer pairs: train on all of them, no early stopping


@dataclass(frozen=True)
class Evaluation:
    step: int
    epoch: float  # fractional: step / steps per epoch
    loss: float


@dataclass
class TrainingReport:
    pairs: int
    examples: int
    train_examples: int
    eval_examples: int
    codes: dict[str, int]
    train_pairs: int = 0
    eval_pairs: int = 0
    steps: int = 0
    eval_loss_before: float | None = None
    eval_loss_after: float | None = None  # the saved (best) model's held-out loss
    evaluations: list[Evaluation] = field(default_factory=list)
    best_step: int | None = None
    stopped_early: bool = False  # the held-out loss stopped improving
    out_of_time: bool = False  # the time limit ended training
    seconds: float = 0.0
    # Where `seconds` went: "prepare" (prompts, model, tokens, the first held-out loss),
    # "steps" (the optimizer steps), "evaluate" (held-out losses) and "save" (keeping
    # and writing the best checkpoint).
    phases: dict[str, float] = field(default_factory=dict)
    output: str = ""
    sources: dict[str, int] = field(default_factory=dict)  # pairs per data source
    config: dict = field(default_factory=dict)
    device: str = ""  # where it trained ("cuda:0", "cpu")
    precision: str = ""  # what the forward passes computed in: "bf16" or "fp32"


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping or touching ones joined."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _example(x_text: str, x_hat, spans: list[tuple[int, int]], code: str) -> TrainingExample | None:
    """A prompt blanking `spans` of x̂, kept only if filling the answers gives x̂ back."""
    spans = _merge(spans)
    if not spans:
        return None
    blank_set = BlankSet(tuple(BlankSpan(start, end) for start, end in spans), "training")
    blanked = blanked_text(x_hat, blank_set)
    answers = [x_hat[start:end].text for start, end in spans]
    filled = fill_blanks(blanked, answers)
    if filled is None or " ".join(filled.split()) != " ".join(x_hat.text.split()):
        return None  # the blanks do not reproduce x̂ (odd spacing); skip rather than mislead
    return TrainingExample(build_prompt(x_text, code, blanked), build_answer(answers), code)


def pair_examples(x, x_hat) -> list[TrainingExample]:
    """Up to four training prompts for one direction of a pair (A.2's blanking strategies)."""
    edit = compute_edit(x, x_hat)
    if not edit.ops:
        return []
    code = detect_code(x, x_hat, edit)
    changed = [op.target for op in edit.ops]
    subtrees = [op.target_subtree for op in edit.ops]
    merged = [(min(s for s, _ in changed), max(e for _, e in changed))]
    whole = [(0, len(x_hat))]
    examples: dict[str, TrainingExample] = {}
    for spans in (changed, subtrees, merged, whole):
        example = _example(x.text, x_hat, spans, code)
        if example is not None:
            examples.setdefault(example.prompt, example)
    return list(examples.values())


def build_examples(
    pairs: list[Pair], *, both_directions: bool = True, parses: ParseCache | None = None
) -> list[TrainingExample]:
    """Every training prompt of `pairs`, in their order, parsed in this process."""
    parses = parses or ParseCache()
    parses.parse_many([text for pair in pairs for text in (pair.x, pair.x_hat)])
    examples = []
    for pair in pairs:
        directions = [(pair.x, pair.x_hat)] + ([(pair.x_hat, pair.x)] if both_directions else [])
        for source, target in directions:
            if source.strip() and target.strip() and source != target:
                examples.extend(pair_examples(parses.parse(source), parses.parse(target)))
    return examples


def build_examples_pooled(
    pairs: list[Pair], *, both_directions: bool = True, workers: int
) -> list[TrainingExample]:
    """What `build_examples` gives, parsed in chunks by the annotation pool's `workers`
    processes (about 30 s of one core for every CAD pair, before a GPU can start)."""
    return annotation_pool.map_chunks(
        _chunk_examples,
        pairs,
        both_directions,
        chunk=EXAMPLE_CHUNK_PAIRS,
        workers=workers,
        model=SPACY_MODEL,
    )


def _chunk_examples(pairs: list[Pair], both_directions: bool) -> list[TrainingExample]:
    """In a pool worker: `build_examples` with the worker's pipeline."""
    parses = ParseCache(annotation_pool.worker_nlp())
    return build_examples(pairs, both_directions=both_directions, parses=parses)


def example_workers(pairs: int) -> int:
    """Worker processes for making the prompts of `pairs` pairs: none for a few hundred,
    whose parsing costs less than starting the workers."""
    return annotation_pool.default_workers() if pairs >= POOLED_MIN_PAIRS else 0


def add_polyjuice_tokens(tokenizer, model) -> int:
    """Add the prompt vocabulary as special tokens and grow the embeddings to fit."""
    added = tokenizer.add_special_tokens(
        {"additional_special_tokens": list(SPECIAL_TOKENS) + list(CODE_TOKENS)},
        replace_extra_special_tokens=False,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if added:
        model.resize_token_embeddings(len(tokenizer))
    return added


def _encode(tokenizer, examples: list[TrainingExample], max_length: int) -> list[dict]:
    """Token ids and labels; the labels skip `x <|perturb|>`, whatever the markers tokenize to.

    Tokenized as two batches (whole texts, contexts): a fast tokenizer's batch call is
    several times quicker than one call per text.
    """
    if not examples:
        return []
    eos = tokenizer.eos_token or ""
    texts = tokenizer(
        [example.text + eos for example in examples],
        add_special_tokens=False,
        truncation=True,
        max_length=max_length,
    )["input_ids"]
    contexts = tokenizer(
        [example.prompt[: example.prompt.index(PERTURB) + len(PERTURB)] for example in examples],
        add_special_tokens=False,
    )["input_ids"]
    encoded = []
    for ids, context in zip(texts, contexts, strict=True):
        start = len(context)
        if start >= len(ids) or ids[:start] != context:
            continue  # x alone filled the length budget, or the boundary moved
        encoded.append({"input_ids": ids, "labels": [-100] * start + ids[start:]})
    return encoded


def _collate(batch: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(item["input_ids"]) for item in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    for row, item in enumerate(batch):  # right padding for training
        length = len(item["input_ids"])
        input_ids[row, :length] = torch.tensor(item["input_ids"])
        labels[row, :length] = torch.tensor(item["labels"])
        attention[row, :length] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": attention}


def _eval_batches(items: list[dict], size: int, pad_id: int) -> list[dict[str, torch.Tensor]]:
    """Held-out items in batches of `size`, shortest first, so that little is padding (the
    loss is a mean over tokens, which the order does not change)."""
    ordered = sorted(items, key=lambda item: len(item["input_ids"]))
    return [_collate(chunk, pad_id) for chunk in _chunks(ordered, size)]


def _to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """The batch on `device`; to a GPU through pinned memory, without waiting for the copy,
    so that the host prepares the next step while the device works."""
    if device.type != "cuda":
        return {key: value.to(device) for key, value in batch.items()}
    return {key: value.pin_memory().to(device, non_blocking=True) for key, value in batch.items()}


def resolve_precision(device: torch.device, precision: str = "auto") -> str:
    """What to train in, bf16 or fp32: the one named, or for "auto" bf16 where the device
    computes in bf16 (a GPU that supports it, a CPU with bf16 instructions: 1.4x faster a
    step for SmolLM2-135M on 2 cores, docs/benchmarks.md) and fp32 elsewhere."""
    from generation.models import cpu_computes_bf16

    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    cuda_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    if precision == "bf16" and device.type == "cuda" and not cuda_bf16:
        raise ValueError("this GPU has no bf16 arithmetic: train with precision fp32")
    if precision != "auto":
        return precision
    if cuda_bf16 or (device.type == "cpu" and cpu_computes_bf16()):
        return "bf16"
    return "fp32"


def _autocast(device: torch.device, precision: str):
    """The context the forward passes run in: bf16 autocast, or a disabled one for fp32."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")


@torch.no_grad()
def _eval_loss(
    model, batches: list[dict], device: torch.device, precision: str = "fp32"
) -> float | None:
    """The mean loss over every answer token of `batches` (read from the device once),
    computed in `precision` as the training steps are."""
    if not batches:
        return None
    model.eval()
    total, count = torch.zeros((), dtype=torch.float64, device=device), 0
    for batch in batches:
        tokens = int((batch["labels"][:, 1:] != -100).sum())  # counted before the copy
        with _autocast(device, precision):
            loss = model(**_to_device(batch, device)).loss
        total += loss.double() * tokens
        count += tokens
    return float(total) / max(count, 1)


def split_pairs(
    pairs: list[Pair], fraction: float, rng: random.Random
) -> tuple[list[Pair], list[Pair]]:
    """(train, held out): whole pairs, shuffled; none held out below MIN_PAIRS_FOR_EVAL."""
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    count = math.ceil(len(shuffled) * fraction) if len(shuffled) >= MIN_PAIRS_FOR_EVAL else 0
    return shuffled[count:], shuffled[:count]


class EarlyStopping:
    """Tracks the best held-out loss; `update` says whether it improved, `done` whether
    `patience` evaluations in a row have not."""

    def __init__(self, patience: int, min_delta: float) -> None:
        self.patience, self.min_delta = patience, min_delta
        self.best: float | None = None
        self.since_best = 0

    def update(self, loss: float) -> bool:
        if self.best is None or loss < self.best - self.min_delta:
            self.best, self.since_best = loss, 0
            return True
        self.since_best += 1
        return False

    @property
    def done(self) -> bool:
        return self.since_best >= self.patience


def _save(model, tokenizer, output: Path) -> None:
    output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(output)
    tokenizer.save_pretrained(output)


# Devices where PyTorch has a fused AdamW step: one pass over every parameter instead of
# several, 2.9x faster a step for SmolLM2-135M on a 2-core CPU (0.09 s against 0.27 s).
FUSED_ADAMW_DEVICES = ("cpu", "cuda")


def _optimizer(model, config: TrainingConfig, total_steps: int):
    """AdamW with linear warm-up and decay (A.2), fused where the device has it."""
    parameters = list(model.parameters())
    fused = all(parameter.device.type in FUSED_ADAMW_DEVICES for parameter in parameters)
    optimizer = torch.optim.AdamW(
        parameters, lr=config.learning_rate, weight_decay=0.0, fused=fused or None
    )
    warmup = max(1, int(total_steps * config.warmup_ratio))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min(
            (step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup))
        ),
    )
    return optimizer, scheduler


def train(
    config: TrainingConfig,
    pairs: list[Pair],
    *,
    show_progress: bool = True,
    sources: dict[str, int] | None = None,
    clock=time.perf_counter,
) -> TrainingReport:
    """Fine-tune `config.base_model` on `pairs` and save a directory the generator loads.

    With a held-out split, the loss on it is measured every `eval_every` steps (or each
    epoch); the model is saved whenever it improves, so the output holds the best
    checkpoint, and training stops after `patience` evaluations without improvement, or
    at the first step past `config.time_limit` seconds (read on `clock`).
    """
    from generation.models import load_causal_lm

    started, wall_started = clock(), time.perf_counter()  # `clock` may be a test's
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)

    # 1. Training prompts from the pairs, both directions, four blankings each; the
    #    held-out pairs are set aside before any prompt is made.
    train_pairs, eval_pairs = split_pairs(pairs, config.eval_fraction, rng)
    workers = example_workers(len(pairs))
    parses = None if workers else ParseCache()

    def prompts_of(part: list[Pair]) -> list[TrainingExample]:
        if workers:
            return build_examples_pooled(
                part, both_directions=config.both_directions, workers=workers
            )
        return build_examples(part, both_directions=config.both_directions, parses=parses)

    train_examples, eval_examples = prompts_of(train_pairs), prompts_of(eval_pairs)
    if not train_examples:
        raise ValueError("No training prompts could be built from these pairs.")
    rng.shuffle(train_examples)

    # 2. The base model, optionally with the Polyjuice vocabulary added.
    lm = load_causal_lm(config.base_model, device=config.device, dtype="float32")
    model, tokenizer, device = lm.model, lm.tokenizer, lm.device
    precision = resolve_precision(device, config.precision)
    if config.add_special_tokens:
        add_polyjuice_tokens(tokenizer, model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    pad_id = tokenizer.pad_token_id
    train_items = _encode(tokenizer, train_examples, config.max_length)
    eval_batches = _eval_batches(
        _encode(tokenizer, eval_examples, config.max_length), config.eval_batch_size, pad_id
    )
    examples = train_examples + eval_examples
    report = TrainingReport(
        pairs=len(pairs),
        examples=len(examples),
        train_examples=len(train_items),
        eval_examples=len(eval_examples),
        codes=dict(Counter(e.code for e in examples)),
        train_pairs=len(train_pairs),
        eval_pairs=len(eval_pairs),
        sources=dict(sources or {}),
        config={key: str(value) for key, value in asdict(config).items()},
        device=str(device),
        precision=precision,
    )
    report.eval_loss_before = _eval_loss(model, eval_batches, device, precision)

    report.phases["prepare"] = time.perf_counter() - wall_started

    # 3. Train, evaluating on the held-out prompts and keeping the best checkpoint.
    deadline = started + config.time_limit if config.time_limit else None
    checkpoints = BestCheckpoint(
        model, lambda: _save(model, tokenizer, config.output), every=config.checkpoint_every
    )
    loop = _TrainingLoop(config, model, eval_batches, pad_id, device, report, deadline, clock)
    mark = time.perf_counter()
    loop.run(train_items, rng, checkpoints=checkpoints, show_progress=show_progress)
    if report.best_step is None:  # no held-out split: the last weights are the model
        _save(model, tokenizer, config.output)
    else:
        checkpoints.finish()
        report.eval_loss_after = min(evaluation.loss for evaluation in report.evaluations)
    spent = time.perf_counter() - mark
    report.phases["evaluate"] = loop.evaluating
    report.phases["save"] = checkpoints.seconds
    report.phases["steps"] = spent - loop.evaluating - checkpoints.seconds

    # 4. The report beside the model.
    report.seconds = clock() - started
    report.output = str(config.output)
    (config.output / TRAINING_REPORT).write_text(json.dumps(asdict(report), indent=2))
    return report


class BestCheckpoint:
    """The best weights so far. Each improvement is written with `write` (the model as it
    is) when `every` seconds have passed since the last write, or none was made yet;
    otherwise the weights are copied into memory (a copy on the model's device, far
    cheaper than a write) and `finish` puts them back into the model and writes them."""

    def __init__(self, model, write, *, every: float, wall=time.perf_counter) -> None:
        self.model, self.write, self.every, self.wall = model, write, every, wall
        self.kept: dict[str, torch.Tensor] | None = None  # reused from copy to copy
        self.pending = False  # `kept` is better than what was written
        self.written_at: float | None = None
        self.writes = 0
        self.seconds = 0.0  # spent copying and writing

    def improved(self) -> None:
        """The model's weights are the best so far."""
        mark = self.wall()
        if self.written_at is None or mark - self.written_at >= self.every:
            self._write()
        else:
            self._keep()
        self.seconds += self.wall() - mark

    def finish(self) -> None:
        """The best weights, back in the model and written, if the last write was not them."""
        mark = self.wall()
        if self.pending:
            self.model.load_state_dict(self.kept)
            self._write()
        self.kept = None
        self.seconds += self.wall() - mark

    def _keep(self) -> None:
        state = self.model.state_dict()
        if self.kept is None:
            self.kept = {name: tensor.detach().clone() for name, tensor in state.items()}
        else:
            for name, tensor in state.items():
                self.kept[name].copy_(tensor)
        self.pending = True

    def _write(self) -> None:
        self.write()
        self.writes += 1
        self.written_at = self.wall()
        self.pending = False


class _TrainingLoop:
    """The optimizer steps, with held-out evaluations and early stopping recorded in `report`."""

    def __init__(
        self, config, model, eval_batches, pad_id, device, report, deadline=None, clock=None
    ) -> None:
        self.config, self.model, self.eval_batches = config, model, eval_batches
        self.pad_id, self.device, self.report = pad_id, device, report
        self.deadline, self.clock = deadline, clock
        self.stopping = EarlyStopping(config.patience, config.min_delta)
        self.steps_per_epoch = 1
        self.bar = None
        self.checkpoints: BestCheckpoint | None = None
        self.evaluating = 0.0  # seconds spent measuring held-out losses

    def run(
        self,
        train_items: list[dict],
        rng: random.Random,
        *,
        checkpoints: BestCheckpoint,
        show_progress: bool,
    ) -> None:
        config, report = self.config, self.report
        self.checkpoints = checkpoints
        self.steps_per_epoch = math.ceil(len(train_items) / config.batch_size)
        total_steps = max(1, self.steps_per_epoch * config.epochs)
        optimizer, scheduler = _optimizer(self.model, config, total_steps)
        if show_progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total_steps, desc="training", unit="step", file=sys.stderr)
        self.model.train()
        for _ in range(config.epochs):
            for chunk in epoch_batches(
                train_items, config.batch_size, rng, group_by_length=config.group_by_length
            ):
                optimizer_step(
                    self.model, chunk, optimizer, scheduler, self.pad_id, report.precision
                )
                report.steps += 1
                if self.bar is not None:
                    self.bar.update(1)
                if self._evaluation_due():
                    self._evaluate()
                    if self.stopping.done:
                        report.stopped_early = True
                        break
                if self.deadline is not None and self.clock() >= self.deadline:
                    report.out_of_time = True
                    break
            if report.stopped_early or report.out_of_time:
                break
        if not report.evaluations or report.evaluations[-1].step != report.steps:
            self._evaluate()  # the steps since the last evaluation
        if self.bar is not None:
            self.bar.close()

    def _evaluation_due(self) -> bool:
        every = self.config.eval_every or self.steps_per_epoch
        return self.report.steps % every == 0

    def _evaluate(self) -> None:
        mark = time.perf_counter()
        loss = _eval_loss(self.model, self.eval_batches, self.device, self.report.precision)
        self.model.train()
        self.evaluating += time.perf_counter() - mark
        if loss is None:  # no held-out prompts
            return
        step = self.report.steps
        self.report.evaluations.append(
            Evaluation(step, round(step / self.steps_per_epoch, 3), loss)
        )
        if self.stopping.update(loss):
            self.report.best_step = step
            self.checkpoints.improved()
        if self.bar is not None:
            self.bar.set_postfix(eval_loss=f"{loss:.3f}", best=f"{self.stopping.best:.3f}")


# Batches per group of `epoch_batches`: the same number as transformers' length-grouped
# sampler takes, enough that a group's batches are nearly all prompt.
GROUP_BATCHES = 50
# A group holds at most this share of an epoch's prompts. The prompts of one pair (two
# directions, four blankings) have nearly the same length, so in a group holding most of
# them a sorted batch is a few pairs' prompts: on 100 CAD pairs, grouping all 543 prompts
# ended one epoch at a held-out loss 5 % higher than random batches (docs/benchmarks.md).
GROUP_SHARE = 1 / 20


def epoch_batches(
    items: list[dict], size: int, rng: random.Random, *, group_by_length: bool
) -> list[list[dict]]:
    """One epoch's batches of `size`, every item once, in an order drawn from `rng`.

    Without grouping: the items shuffled and cut in order. With it: the shuffled items
    are cut into groups of GROUP_BATCHES batches (fewer where that would be more than
    GROUP_SHARE of the items; a batch at least), each group sorted by length and cut
    into batches (so a batch pads its prompts to nearly their own length), and the
    batches are shuffled, the longest first, so that a batch too large for the device's
    memory fails at the first step, not hours into the run. The count of batches is the
    same either way.
    """
    shuffled = list(items)
    rng.shuffle(shuffled)
    if not group_by_length:
        return _chunks(shuffled, size)
    group_batches = max(1, min(GROUP_BATCHES, int(len(items) * GROUP_SHARE) // size))
    batches = []
    for group in _chunks(shuffled, size * group_batches):
        group.sort(key=lambda item: len(item["input_ids"]))
        batches += _chunks(group, size)
    rng.shuffle(batches)
    longest = max(range(len(batches)), key=lambda index: _tokens(batches[index]), default=0)
    if batches:
        batches[0], batches[longest] = batches[longest], batches[0]
    return batches


def _tokens(batch: list[dict]) -> int:
    """Positions a batch computes, padding included."""
    return len(batch) * max(len(item["input_ids"]) for item in batch)


def useful_share(batches: list[list[dict]]) -> float:
    """The share of the positions that padded `batches` compute which are prompt tokens."""
    real = sum(len(item["input_ids"]) for batch in batches for item in batch)
    return real / sum(_tokens(batch) for batch in batches)


def optimizer_step(model, chunk: list[dict], optimizer, scheduler, pad_id: int, precision: str):
    """One training step on `chunk` (encoded prompts): forward in `precision`, backward,
    gradients clipped to norm 1, AdamW and the schedule stepped."""
    device = next(model.parameters()).device
    batch = _to_device(_collate(chunk, pad_id), device)
    with _autocast(device, precision):
        loss = model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)


def _chunks(items: list, size: int) -> list[list]:
    return [items[index : index + size] for index in range(0, len(items), size)]
