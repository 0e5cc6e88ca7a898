"""The names a model's weight dtype may be given by, without importing torch.

`generation.models.resolve_dtype` turns them into torch dtypes; the site's startup check
(`cfannotate.candidates.checks`) reads `DTYPE_ENV` with `dtype_problem` so that a bad
value stops a process before any model loads, without paying for torch.
"""

import argparse
import os

DTYPE_ENV = "CFANNOTATE_DTYPE"  # what "auto" means in this process: float32, bfloat16, float16

# Each accepted name -> the torch dtype it means (an attribute of `torch`).
DTYPE_NAMES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
}


def requested_dtype(dtype: str = "auto") -> str:
    """The name asked for, lowercased: `dtype`, or for "auto" the environment's, else "auto"."""
    name = dtype.strip().lower()
    if name == "auto":
        name = os.environ.get(DTYPE_ENV, "").strip().lower() or "auto"
    return name


def dtype_problem(dtype: str = "auto") -> str | None:
    """Why `dtype` (or, for "auto", `DTYPE_ENV`) names no dtype; None when it does."""
    name = requested_dtype(dtype)
    if name == "auto" or name in DTYPE_NAMES:
        return None
    where = f" (from {DTYPE_ENV})" if dtype.strip().lower() == "auto" else ""
    return f"Unknown dtype {name!r}{where}: use 'auto', 'float32', 'bfloat16' or 'float16'."


def add_dtype_argument(parser: argparse.ArgumentParser) -> None:
    """`--dtype`, refused by argparse in one line when it names no dtype."""
    parser.add_argument(
        "--dtype",
        default="auto",
        choices=["auto", *DTYPE_NAMES],
        help="Weights: auto (bf16 on a GPU or a CPU with bf16 instructions, else fp32), "
        "float32, bfloat16 or float16.",
    )
