"""Builds a tiny GPT-2 whose next token depends only on the current one, so decoding is scripted.

Random tiny models almost never write a well-formed Polyjuice answer, which leaves the
pipeline and command-line tests nothing to look at. This model answers every native
prompt the same way: after `[SEP]` it writes `ANSWER_WORD [ANSWER]`, then end-of-text.
One-hot embeddings, a transformer block whose weights are zero (the residual passes the
token through untouched) and an untied head that maps a token to its successor make the
next token a lookup; one extra hidden unit, held at 1 by the final layer norm's bias,
gives end-of-text a fixed lead over every token without a successor. The margins are
tens of nats, so sampling picks the scripted token too.
"""

from pathlib import Path

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from generation.tokens import ANSWER, SEP
from tests.generation.tiny_models import build_tiny_tokenizer

ANSWER_WORD = "not"
# A one-hot token is about sqrt(vocab) ≈ 20 after layer norm: a successor scores ≈ 100 nats,
# end-of-text 50, everything else about 0.
_SUCCESSOR_WEIGHT = 5.0
_EOS_LOGIT = 50.0


def build_scripted_lm(directory: Path) -> Path:
    """Save the scripted model and the tiny GPT-2 tokenizer into `directory` and return it."""
    tokenizer = build_tiny_tokenizer("gpt2")
    vocab = len(tokenizer)
    eos = tokenizer.eos_token_id
    word = tokenizer.convert_tokens_to_ids("Ġ" + ANSWER_WORD)
    successor = {
        tokenizer.convert_tokens_to_ids(SEP): word,
        word: tokenizer.convert_tokens_to_ids(ANSWER),
    }
    bias_unit = vocab  # the extra hidden unit

    config = GPT2Config(
        vocab_size=vocab,
        n_positions=256,
        n_embd=vocab + 1,
        n_layer=1,
        n_head=1,
        n_inner=4,
        bos_token_id=eos,
        eos_token_id=eos,
        tie_word_embeddings=False,
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.transformer.wte.weight[:, :vocab].copy_(torch.eye(vocab))
        model.transformer.ln_f.weight[:vocab].fill_(1.0)
        model.transformer.ln_f.bias[bias_unit] = 1.0
        model.lm_head.weight[eos, bias_unit] = _EOS_LOGIT
        for current, following in successor.items():
            model.lm_head.weight[following, current] = _SUCCESSOR_WEIGHT
    directory.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def scripted_lm_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripted model, built once per test session."""
    directory = tmp_path_factory.getbasetemp() / "scripted-gpt2-lm"
    if (directory / "config.json").is_file():
        return directory
    return build_scripted_lm(directory)
