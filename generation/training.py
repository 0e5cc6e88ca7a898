"""Fine-tunes a causal LM into the Polyjuice format from paired data (Polyjuice Appendix A.2).

Every pair is used both ways, (x, x̂) and (x̂, x). For each direction the primary
control code comes from our detector, and up to four prompts are made with
different blanks in x̂: (1) just the changed tokens, (2) their parse subtrees,
(3) one blank over the merged changes, (4) the whole sentence. A training text is
`x <|perturb|> [code] blanked [SEP] a1 [ANSWER] ... <eos>`; the loss covers what
follows <|perturb|>, so the model learns codes, blanks and answers, not to copy x.
The output directory holds `cfannotate_training.json`, which tells the generator to
prompt it in the native format.
"""

import argparse
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

from generation.blanks import BlankSet, BlankSpan, blanked_text
from generation.control_codes import detect_code
from generation.edits import compute_edit
from generation.pairs import Pair, read_pairs
from generation.parsing import ParseCache
from generation.prompts import build_answer, build_prompt, fill_blanks
from generation.strategies import TRAINING_REPORT
from generation.tokens import CODE_TOKENS, PERTURB, SPECIAL_TOKENS

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingExample:
    prompt: str  # x <|perturb|> [code] blanked [SEP]
    answer: str  # a1 [ANSWER] a2 [ANSWER]
    code: str

    @property
    def text(self) -> str:
        return f"{self.prompt} {self.answer}"


@dataclass(frozen=True)
class TrainingConfig:
    base_model: str
    output: Path
    epochs: int = 3  # A.2: 3 epochs
    learning_rate: float = 5e-5  # A.2: 5e-5
    batch_size: int = 16  # A.2: 16
    max_length: int = 120  # A.2: sequence length 120
    warmup_ratio: float = 0.05
    eval_fraction: float = 0.05
    device: str = "auto"
    seed: int = 0
    both_directions: bool = True
    # Plain-text markers (as the published Polyjuice model learned them) reuse embeddings
    # the model already has; new special tokens start untrained and, in a short CPU run
    # on CAD (docs/benchmarks.md), were never emitted. Opt in for long GPU runs.
    add_special_tokens: bool = False


@dataclass
class TrainingReport:
    pairs: int
    examples: int
    train_examples: int
    eval_examples: int
    codes: dict[str, int]
    steps: int = 0
    eval_loss_before: float | None = None
    eval_loss_after: float | None = None
    seconds: float = 0.0
    output: str = ""
    config: dict = field(default_factory=dict)


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
    parses = parses or ParseCache()
    parses.parse_many([text for pair in pairs for text in (pair.x, pair.x_hat)])
    examples = []
    for pair in pairs:
        directions = [(pair.x, pair.x_hat)] + ([(pair.x_hat, pair.x)] if both_directions else [])
        for source, target in directions:
            if source.strip() and target.strip() and source != target:
                examples.extend(pair_examples(parses.parse(source), parses.parse(target)))
    return examples


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
    """Token ids and labels; the labels skip `x <|perturb|>`, whatever the markers tokenize to."""
    eos = tokenizer.eos_token or ""
    encoded = []
    for example in examples:
        ids = tokenizer(
            example.text + eos, add_special_tokens=False, truncation=True, max_length=max_length
        )["input_ids"]
        context = example.prompt[: example.prompt.index(PERTURB) + len(PERTURB)]
        start = len(tokenizer(context, add_special_tokens=False)["input_ids"])
        if (
            start >= len(ids)
            or ids[:start] != tokenizer(context, add_special_tokens=False)["input_ids"]
        ):
            continue  # x alone filled the length budget, or the boundary moved
        labels = [-100] * start + ids[start:]
        encoded.append({"input_ids": ids, "labels": labels})
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


@torch.no_grad()
def _eval_loss(model, batches: list[dict], device: torch.device) -> float | None:
    if not batches:
        return None
    model.eval()
    total, count = 0.0, 0
    for batch in batches:
        batch = {key: value.to(device) for key, value in batch.items()}
        tokens = int((batch["labels"][:, 1:] != -100).sum())
        total += float(model(**batch).loss) * tokens
        count += tokens
    return total / max(count, 1)


def train(
    config: TrainingConfig, pairs: list[Pair], *, show_progress: bool = True
) -> TrainingReport:
    """Fine-tune `config.base_model` on `pairs` and save a directory the generator loads."""
    from generation.models import load_causal_lm

    started = time.perf_counter()
    rng = random.Random(config.seed)
    torch.manual_seed(config.seed)

    # 1. Training prompts from the pairs, both directions, four blankings each.
    examples = build_examples(pairs, both_directions=config.both_directions)
    if not examples:
        raise ValueError("No training prompts could be built from these pairs.")
    rng.shuffle(examples)
    eval_count = int(len(examples) * config.eval_fraction) if len(examples) >= 40 else 0
    eval_examples, train_examples = examples[:eval_count], examples[eval_count:]

    # 2. The base model with the Polyjuice vocabulary added.
    lm = load_causal_lm(config.base_model, device=config.device, dtype="float32")
    model, tokenizer, device = lm.model, lm.tokenizer, lm.device
    if config.add_special_tokens:
        add_polyjuice_tokens(tokenizer, model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    pad_id = tokenizer.pad_token_id
    train_items = _encode(tokenizer, train_examples, config.max_length)
    eval_batches = [
        _collate(chunk, pad_id)
        for chunk in _chunks(
            _encode(tokenizer, eval_examples, config.max_length), config.batch_size
        )
    ]
    report = TrainingReport(
        pairs=len(pairs),
        examples=len(examples),
        train_examples=len(train_items),
        eval_examples=len(eval_examples),
        codes=dict(Counter(e.code for e in examples)),
        config={key: str(value) for key, value in asdict(config).items()},
    )
    report.eval_loss_before = _eval_loss(model, eval_batches, device)

    # 3. AdamW with linear warm-up and decay, bf16 autocast on CUDA.
    steps_per_epoch = math.ceil(len(train_items) / config.batch_size)
    total_steps = max(1, steps_per_epoch * config.epochs)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.0)
    warmup = max(1, int(total_steps * config.warmup_ratio))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: min(
            (step + 1) / warmup, max(0.0, (total_steps - step) / max(1, total_steps - warmup))
        ),
    )
    autocast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if device.type == "cuda"
        else torch.autocast("cpu", enabled=False)
    )
    bar = None
    if show_progress:
        from tqdm import tqdm

        bar = tqdm(total=total_steps, desc="training", unit="step", file=sys.stderr)
    model.train()
    for _ in range(config.epochs):
        rng.shuffle(train_items)
        for chunk in _chunks(train_items, config.batch_size):
            batch = {key: value.to(device) for key, value in _collate(chunk, pad_id).items()}
            with autocast:
                loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            report.steps += 1
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss.detach().item():.3f}")
    if bar is not None:
        bar.close()
    report.eval_loss_after = _eval_loss(model, eval_batches, device)

    # 4. Save model, tokenizer and the report together.
    config.output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(config.output)
    tokenizer.save_pretrained(config.output)
    report.seconds = time.perf_counter() - started
    report.output = str(config.output)
    (config.output / TRAINING_REPORT).write_text(json.dumps(asdict(report), indent=2))
    return report


def _chunks(items: list, size: int) -> list[list]:
    return [items[index : index + size] for index in range(0, len(items), size)]


def train_command(args: argparse.Namespace) -> int:
    options = {}
    if args.format == "tsv":
        options = {"x_column": args.x_column, "x_hat_column": args.x_hat_column}
    pairs = read_pairs(Path(args.pairs), args.format, **options)
    if args.max_pairs:
        pairs = pairs[: args.max_pairs]
    from generation.models import DEFAULT_MODEL

    config = TrainingConfig(
        base_model=args.base_model or DEFAULT_MODEL,
        output=Path(args.output),
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device=args.device,
        seed=args.seed,
        add_special_tokens=args.add_special_tokens,
    )
    report = train(config, pairs, show_progress=not args.quiet)
    print(json.dumps(asdict(report), indent=2))
    return 0


def add_train_parser(commands) -> None:
    parser = commands.add_parser(
        "train",
        help="Fine-tune a causal LM into the Polyjuice format from (x, x̂) pairs.",
    )
    parser.add_argument("--pairs", required=True, help="JSONL (x, x_hat), TSV, or CAD file.")
    parser.add_argument(
        "--format", default="auto", choices=["auto", "jsonl", "tsv", "cad-sentiment"]
    )
    parser.add_argument("--x-column", default="x")
    parser.add_argument("--x-hat-column", default="x_hat")
    parser.add_argument("--base-model", default=None, help="Hub id, local dir, or the default.")
    parser.add_argument("--output", required=True, help="Directory to write the model to.")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=5e-5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-length", type=int, default=120)
    parser.add_argument("--max-pairs", type=int, default=None)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="Learn the markers as new tokens (needs a long run; default: text).",
    )
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(handler=train_command)
