"""Checks of command-line values made before any slow work: numbers in range (as argparse
types, so argparse names the option) and the paths a command will write to."""

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path

# A directory holding this file is a model a previous run saved; training may overwrite it.
MODEL_MARKER = "config.json"


def whole_number_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than `minimum`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse


def number_at_least(minimum: float) -> Callable[[str], float]:
    """An argparse type: a finite number no smaller than `minimum`."""

    def parse(text: str) -> float:
        value = _finite_number(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {minimum:g} or more, not {text}")
        return value

    return parse


def number_above(minimum: float) -> Callable[[str], float]:
    """An argparse type: a finite number larger than `minimum`."""

    def parse(text: str) -> float:
        value = _finite_number(text)
        if not value > minimum:
            raise argparse.ArgumentTypeError(f"must be more than {minimum:g}, not {text}")
        return value

    return parse


def share(*, zero: bool, one: bool) -> Callable[[str], float]:
    """An argparse type: a number between 0 and 1, each end allowed or not."""
    low = "0 or more" if zero else "more than 0"
    high = "at most 1" if one else "less than 1"

    def parse(text: str) -> float:
        value = _finite_number(text)
        above_low = value >= 0 if zero else value > 0
        below_high = value <= 1 if one else value < 1
        if not (above_low and below_high):
            raise argparse.ArgumentTypeError(f"must be {low} and {high}, not {text}")
        return value

    return parse


def _finite_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
    return value


def check_writable_file(option: str, path: str) -> None:
    """Raise ValueError, naming `option`, when `path` cannot be written as a file."""
    problem = _file_write_problem(Path(path))
    if problem:
        raise ValueError(f"{option} {path}: cannot write: {problem}")


def _file_write_problem(path: Path) -> str | None:
    if path.is_dir():
        return "it is a directory; name a file"
    folder = path.parent
    if not folder.exists():
        return f"there is no directory {folder}"
    if not folder.is_dir():
        return f"{folder} is a file, not a directory"
    if path.exists() and not os.access(path, os.W_OK):
        return "permission denied"
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        return f"no permission to write in {folder}"
    return None


def check_model_output(option: str, path: str) -> None:
    """Raise ValueError, naming `option`, unless `path` is a directory a model can be saved
    to: a new one (its nearest existing parent a writable directory), an empty one, or a
    model directory an earlier run saved, which training overwrites."""
    problem = _model_output_problem(Path(path))
    if problem:
        raise ValueError(f"{option} {path}: cannot save the model there: {problem}")


def _model_output_problem(path: Path) -> str | None:
    if path.exists():
        if not path.is_dir():
            return "it is a file, not a directory"
        if any(path.iterdir()) and not (path / MODEL_MARKER).is_file():
            return (
                "it holds files but no model; name a new or empty directory, "
                "or a model directory to overwrite"
            )
        if not os.access(path, os.W_OK | os.X_OK):
            return "no permission to write in it"
        return None
    parent = _nearest_existing(path)
    if not parent.is_dir():
        return f"{parent} is a file, not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"no permission to write in {parent}"
    return None


def _nearest_existing(path: Path) -> Path:
    for parent in path.absolute().parents:
        if parent.exists():
            return parent
    return Path(path.absolute().anchor)
