"""Benchmark: one optimizer step of `python -m generation train`, ours against the old one.

Both sides run in this process, on the same training prompts (CAD sentiment and NLI pairs
under ../shared/data, both directions, four blankings each, as `generation train` makes
them), from the same starting weights of the packaged SmolLM2-135M (or `--model`):

- baseline: fp32 forward passes and batches cut from the shuffled prompts in order (what
  training did before 2026-11-27, session 23);
- ours: `--precision auto` (bf16 autocast over fp32 weights where the device computes in
  bf16) and batches of prompts of similar length (`generation.training.epoch_batches`);
- the two in between (each change alone), so that the ratio can be split between them.

Each side takes one untimed step, then `--steps` timed steps on batches drawn at random
from one epoch's batches (so grouping's longest-first batch does not count more than its
share). Printed: seconds a step, the share of computed positions that are prompt (the
rest is padding), and the ratio baseline / ours.

    python bench/training.py                  # 2,000 pairs, 8 timed steps a side
    python bench/training.py --quick          # 600 pairs, 3 steps a side (~3 min, 2 cores)
    python bench/training.py --device cuda    # a GPU (see bench/gpu/run.sh)

The last line reads `RESULT training ratio=... seconds_per_step=... baseline_seconds_per_step=...
precision=... useful_share=... baseline_useful_share=... device=...`.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

import torch  # noqa: E402

from generation.models import DEFAULT_MODEL, load_causal_lm  # noqa: E402
from generation.pairs import paired_data  # noqa: E402
from generation.training import (  # noqa: E402
    TrainingConfig,
    _encode,
    _optimizer,
    build_examples_pooled,
    epoch_batches,
    example_workers,
    optimizer_step,
    resolve_precision,
    useful_share,
)
from generation.training_cli import DEFAULT_DATA  # noqa: E402


def time_steps(lm, start_state, batches, precision, pad_id) -> list[float]:
    """Seconds of each optimizer step on `batches` (the first one untimed), from `start_state`."""
    model, device = lm.model, lm.device
    model.load_state_dict(start_state)
    model.train()
    config = TrainingConfig(base_model="unused", output=Path("unused"))
    optimizer, scheduler = _optimizer(model, config, total_steps=1_000)
    seconds = []
    for batch in batches:
        mark = time.perf_counter()
        optimizer_step(model, batch, optimizer, scheduler, pad_id, precision)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - mark)
    return seconds[1:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="Folder with the CAD pairs.")
    parser.add_argument("--pairs", type=int, default=2_000, help="Pairs drawn (2,000).")
    parser.add_argument("--steps", type=int, default=8, help="Timed steps a side (8).")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="600 pairs, 3 steps a side.")
    args = parser.parse_args(argv)
    if args.quick:
        args.pairs, args.steps = 600, 3
    if args.pairs < 1 or args.steps < 1 or args.batch_size < 1:
        parser.error("--pairs, --steps and --batch-size must be at least 1")
    folder = Path(args.data)
    if not folder.is_dir():
        parser.error(f"no data folder {folder}: pass --data (the CAD folder's parent)")

    pairs = [pair for source in paired_data(folder, ("train",)).values() for pair in source]
    random.Random(args.seed).shuffle(pairs)
    pairs = pairs[: args.pairs]
    examples = build_examples_pooled(
        pairs, both_directions=True, workers=max(1, example_workers(len(pairs)))
    )
    lm = load_causal_lm(args.model, device=args.device, dtype="float32")
    tokenizer = lm.tokenizer
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    items = _encode(tokenizer, examples, TrainingConfig.max_length)
    start_state = {name: tensor.detach().clone() for name, tensor in lm.model.state_dict().items()}
    precision = resolve_precision(lm.device, "auto")
    print(
        f"{len(pairs)} pairs, {len(items)} prompts, batches of {args.batch_size}, "
        f"{args.steps} timed steps a side, on {lm.device} (auto precision: {precision})",
        flush=True,
    )

    results = {}
    for grouped in (False, True):
        epoch = epoch_batches(
            items, args.batch_size, random.Random(args.seed), group_by_length=grouped
        )
        share = useful_share(epoch)
        drawn = random.Random(args.seed + 1).sample(epoch, min(len(epoch), args.steps + 1))
        for arithmetic in dict.fromkeys(("fp32", precision)):
            seconds = statistics.mean(time_steps(lm, start_state, drawn, arithmetic, pad_id))
            results[grouped, arithmetic] = (seconds, share)
            batching = "grouped by length" if grouped else "random batches"
            print(
                f"  {arithmetic:4} {batching:17}: {seconds:6.2f} s a step, "
                f"{share:.0%} of positions are prompt",
                flush=True,
            )

    baseline, baseline_share = results[False, "fp32"]
    ours, ours_share = results[True, precision]
    print(f"ratio (baseline / ours): {baseline / ours:.2f}x")
    print(
        f"RESULT training ratio={baseline / ours:.3f} seconds_per_step={ours:.4f} "
        f"baseline_seconds_per_step={baseline:.4f} precision={precision} "
        f"useful_share={ours_share:.3f} baseline_useful_share={baseline_share:.3f} "
        f"device={lm.device.type}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
