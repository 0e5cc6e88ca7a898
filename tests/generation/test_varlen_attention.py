"""Packed attention for continuous batching (generation.engines.varlen_attention).

Each packed sequence must attend over its own keys only, causally from the end of its
keys (a prompt chunk after its cache, one new token after its cache), with grouped-query
heads shared like transformers shares them. The reference below builds the same answer
the slow way: one padded sequence at a time, eager softmax, explicit masks.

Runs without Django (`--noconftest`), so a GPU machine with torch alone can run the CUDA
case: `python -m pytest --noconftest tests/generation/test_varlen_attention.py`.
"""

import itertools
import math

import pytest
import torch

from generation.engines import varlen_attention
from generation.engines.varlen_attention import (
    VARLEN_ATTENTION,
    attention_set,
    varlen_attention_forward,
)

# (queries, keys) per packed sequence: a whole prompt, a chunk after a cache, one decode
# step after a long cache, a single-token prompt.
SEQUENCES = [(5, 5), (3, 9), (1, 17), (1, 1)]
QUERY_HEADS, KEY_HEADS, HEAD_DIM = 6, 2, 16


def packed_inputs(device="cpu", dtype=torch.float32, seed=0):
    generator = torch.Generator().manual_seed(seed)
    total_q = sum(q for q, _ in SEQUENCES)
    total_k = sum(k for _, k in SEQUENCES)

    def random(heads, tokens):
        return torch.randn(1, heads, tokens, HEAD_DIM, generator=generator).to(device, dtype)

    cu_q = torch.tensor([0, *itertools.accumulate(q for q, _ in SEQUENCES)], dtype=torch.int32)
    cu_k = torch.tensor([0, *itertools.accumulate(k for _, k in SEQUENCES)], dtype=torch.int32)
    lengths = {
        "cu_seq_lens_q": cu_q.to(device),
        "cu_seq_lens_k": cu_k.to(device),
        "max_length_q": max(q for q, _ in SEQUENCES),
        "max_length_k": max(k for _, k in SEQUENCES),
    }
    query = random(QUERY_HEADS, total_q)
    return query, random(KEY_HEADS, total_k), random(KEY_HEADS, total_k), lengths


def reference(query, key, value, lengths, scale):
    """Eager attention, one sequence at a time, query head h reading key head h // group."""
    group = QUERY_HEADS // KEY_HEADS
    cu_q, cu_k = lengths["cu_seq_lens_q"].tolist(), lengths["cu_seq_lens_k"].tolist()
    out = torch.zeros(query.shape[2], QUERY_HEADS, HEAD_DIM, dtype=torch.float64)
    for i, (queries, keys) in enumerate(SEQUENCES):
        for head in range(QUERY_HEADS):
            q = query[0, head, cu_q[i] : cu_q[i + 1]].double()
            k = key[0, head // group, cu_k[i] : cu_k[i + 1]].double()
            v = value[0, head // group, cu_k[i] : cu_k[i + 1]].double()
            scores = q @ k.T * scale
            for row in range(queries):
                visible = keys - queries + row  # the query's own position
                scores[row, visible + 1 :] = -math.inf
            out[cu_q[i] : cu_q[i + 1], head] = scores.softmax(-1) @ v
    return out.unsqueeze(0)


class Attention(torch.nn.Module):
    """What transformers passes as `module`."""


def test_each_packed_sequence_attends_causally_over_its_own_keys_only():
    query, key, value, lengths = packed_inputs()
    out, weights = varlen_attention_forward(
        Attention(), query, key, value, None, scaling=0.3, is_causal=True, **lengths
    )
    assert weights is None
    assert out.shape == (1, query.shape[2], QUERY_HEADS, HEAD_DIM)  # [1, tokens, heads, dim]
    torch.testing.assert_close(out, reference(query, key, value, lengths, 0.3).float())


def test_decoding_steps_attend_alike_in_groups_of_any_size(monkeypatch):
    """Without the kernel, one-query sequences go together a group of padded keys at a time."""
    query, key, value, lengths = packed_inputs(seed=1)
    whole, _ = varlen_attention_forward(Attention(), query, key, value, None, **lengths)
    monkeypatch.setattr(varlen_attention, "SINGLE_QUERY_KEYS", 1)  # one sequence a group
    one_by_one, _ = varlen_attention_forward(Attention(), query, key, value, None, **lengths)
    torch.testing.assert_close(one_by_one, whole)
    expected = reference(query, key, value, lengths, HEAD_DIM**-0.5).float()
    torch.testing.assert_close(whole, expected)


def test_another_sequence_keys_change_nothing():
    """Changing the last sequence's keys and values leaves the others' outputs as they were."""
    query, key, value, lengths = packed_inputs()
    before, _ = varlen_attention_forward(Attention(), query, key, value, None, **lengths)
    start = lengths["cu_seq_lens_k"][-2]
    key[0, :, start:] += 5.0
    value[0, :, start:] += 5.0
    after, _ = varlen_attention_forward(Attention(), query, key, value, None, **lengths)
    last = lengths["cu_seq_lens_q"][-2]
    torch.testing.assert_close(after[:, :last], before[:, :last])
    assert not torch.allclose(after[:, last:], before[:, last:])


def test_a_mask_or_an_unpacked_batch_is_refused():
    query, key, value, lengths = packed_inputs()
    with pytest.raises(ValueError, match="one packed row and no mask"):
        varlen_attention_forward(Attention(), query, key, value, torch.ones(1), **lengths)
    with pytest.raises(ValueError, match="one packed row and no mask"):
        varlen_attention_forward(
            Attention(), query.expand(2, -1, -1, -1), key, value, None, **lengths
        )


@pytest.mark.parametrize("option", [{"sliding_window": 4096}, {"softcap": 50.0}])
def test_what_packed_attention_does_not_do_is_refused_not_ignored(option):
    query, key, value, lengths = packed_inputs()
    with pytest.raises(ValueError, match=f"does not do {next(iter(option))}"):
        varlen_attention_forward(Attention(), query, key, value, None, **lengths, **option)


def test_attention_set_restores_the_model_implementation_even_on_error():
    class Config:
        _attn_implementation = "sdpa"

    class Model:
        config = Config()

    model = Model()
    with pytest.raises(RuntimeError), attention_set(model):
        assert model.config._attn_implementation == VARLEN_ATTENTION
        raise RuntimeError("decoding failed")
    assert model.config._attn_implementation == "sdpa"


def test_the_kernel_is_only_claimed_on_cuda():
    assert not varlen_attention.available_on(torch.device("cpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch's varlen kernel needs CUDA")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_the_cuda_kernel_agrees_with_the_reference(dtype):
    assert varlen_attention.available_on(torch.device("cuda"))
    query, key, value, lengths = packed_inputs("cuda", dtype)
    scale = HEAD_DIM**-0.5
    out, _ = varlen_attention_forward(
        Attention(), query, key, value, None, scaling=scale, **lengths
    )
    inputs = (tensor.float().cpu() for tensor in (query, key, value))
    expected = reference(
        *inputs, {k: v.cpu() if torch.is_tensor(v) else v for k, v in lengths.items()}, scale
    )
    torch.testing.assert_close(out.double().cpu(), expected, atol=2e-2, rtol=2e-2)
