"""Attention over packed sequences for continuous batching, without the flash-attn package.

transformers' continuous batching packs every request of a step into one row. With
`sdpa` it then builds a mask over (all queries of the step) x (all keys of the step) and
attends everything to everything, masked: a decoding step of R requests with caches of
L tokens costs R x (R x L), the square of the batch. With a flash implementation it
passes the packed sequences' boundaries instead (`cu_seq_lens_q`, `cu_seq_lens_k`) and
no mask, so a step costs R x L. The flash-attn package (or a kernel from the hub) is
what transformers expects there; neither installs on a machine without a registry or a
compiler, but PyTorch ships the same kernel as `torch.nn.attention.varlen.varlen_attn`.

`VARLEN_ATTENTION` is registered with transformers as an attention implementation whose
name says "flash", so continuous batching takes its packed path, and is set on the
model's config only for the life of one continuous-batching manager (`attention_set`):
the model's other users (the loop engine, fluency scoring) keep their own.

On CUDA with half-precision tensors it calls PyTorch's varlen kernel; elsewhere (CPU,
float32) it uses `scaled_dot_product_attention`: decoding steps (one query each)
together, padded to the longest of their keys, prompt chunks one by one; linear in the
batch too. Queries attend causally, aligned to the end of their keys (a chunk of prompt
or one new token after its request's cache), as flash does.
"""

import functools
import inspect
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from transformers import AttentionInterface

VARLEN_ATTENTION = "flash_varlen_cfannotate"
HALF_DTYPES = (torch.float16, torch.bfloat16)
# Without the kernel, decoding steps attend together in groups of at most this many
# (padded) keys: a few hundred MB for a SmolLM2-sized layer in fp32.
SINGLE_QUERY_KEYS = 1 << 18


def varlen_attention_forward(
    module: torch.nn.Module,
    query: torch.Tensor,  # [1, query heads, packed query tokens, head dim]
    key: torch.Tensor,  # [1, key heads, packed key tokens, head dim]
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    *,
    cu_seq_lens_q: torch.Tensor,
    cu_seq_lens_k: torch.Tensor,
    max_length_q: int,
    max_length_k: int,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """The attention of each packed sequence over its own keys: ([1, tokens, heads, dim], None)."""
    if attention_mask is not None or query.shape[0] != 1:
        raise ValueError("Packed attention takes one packed row and no mask (continuous batching).")
    unsupported = [name for name in ("sliding_window", "softcap", "s_aux") if kwargs.get(name)]
    if unsupported:
        raise ValueError(f"Packed attention does not do {', '.join(unsupported)}; use sdpa.")
    # The packed layout PyTorch's kernel reads: [tokens, heads, head dim].
    q, k, v = (tensor[0].transpose(0, 1) for tensor in (query, key, value))
    scale = scaling if scaling is not None else q.shape[-1] ** -0.5
    if q.dtype in HALF_DTYPES and available_on(q.device):
        lengths = (cu_seq_lens_q, cu_seq_lens_k, max_length_q, max_length_k)
        out = _kernel_attention(q, k, v, *lengths, scale)
    else:
        out = _attention_without_kernel(q, k, v, cu_seq_lens_q, cu_seq_lens_k, scale)
    return out.unsqueeze(0), None


def unsupported_reason(config) -> str | None:
    """What in a model's attention packed attention does not do, or None when it can stand
    in for it: causal attention over every earlier token, scaled, grouped heads at most."""
    config = config.get_text_config() if hasattr(config, "get_text_config") else config
    layer_types = getattr(config, "layer_types", None) or ()
    window = getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True)
    if any("sliding" in kind for kind in layer_types) or (window and not layer_types):
        return "sliding-window attention"
    if getattr(config, "attn_logit_softcapping", None):
        return "soft-capped attention scores"
    return None


def available_on(device: torch.device) -> bool:
    """Whether packed attention has PyTorch's kernel on `device` (else it runs on sdpa)."""
    return device.type == "cuda" and _kernel() is not None


@contextmanager
def attention_set(model):
    """Packed attention on `model` for the duration, its own implementation restored after.

    Set on the config directly: `set_attn_implementation` would look for a flash-attn
    package or download a kernel for any name that says "flash"."""
    config = model.config
    previous = config._attn_implementation
    config._attn_implementation = VARLEN_ATTENTION
    try:
        yield
    finally:
        config._attn_implementation = previous


@functools.cache
def _kernel():
    """PyTorch's varlen flash kernel and the keyword arguments its version takes, or None."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    parameters = frozenset(inspect.signature(varlen_attn).parameters)
    if not parameters & {"window_size", "is_causal"}:
        return None  # a version that cannot say "causal"
    return varlen_attn, parameters


def _kernel_attention(q, k, v, cu_q, cu_k, max_q: int, max_k: int, scale: float) -> torch.Tensor:
    kernel, parameters = _kernel()
    options = {}
    # Causal, aligned to the end of the keys: PyTorch 2.13 says it with a window,
    # earlier versions with a flag.
    if "window_size" in parameters:
        options["window_size"] = (-1, 0)
    else:
        options["is_causal"] = True
    if "scale" in parameters:
        options["scale"] = scale
    elif abs(scale - q.shape[-1] ** -0.5) > 1e-9:
        return _attention_without_kernel(q, k, v, cu_q, cu_k, scale)
    if "enable_gqa" in parameters:
        options["enable_gqa"] = q.shape[1] != k.shape[1]
    else:
        k, v = _heads_repeated(k, q.shape[1]), _heads_repeated(v, q.shape[1])
    cu_q, cu_k = cu_q.to(torch.int32), cu_k.to(torch.int32)
    return kernel(q, k, v, cu_q, cu_k, int(max_q), int(max_k), **options)


def _attention_without_kernel(q, k, v, cu_q, cu_k, scale: float) -> torch.Tensor:
    """Each packed sequence over its own keys, causally from the end: [tokens, heads, dim].

    Without the kernel. Sequences with one query (a decoding step, most of them) go
    together, their keys padded to the longest and masked, at most `SINGLE_QUERY_KEYS`
    padded keys at a time; the others (prompt chunks) one by one."""
    out = torch.empty_like(q)
    lengths_q, lengths_k = cu_q[1:] - cu_q[:-1], cu_k[1:] - cu_k[:-1]
    single = torch.nonzero(lengths_q == 1).flatten()
    if len(single):
        longest = int(lengths_k[single].max())
        step = max(1, SINGLE_QUERY_KEYS // longest)
        for chunk in single.split(step):
            out[cu_q[chunk].long()] = _single_query_attention(
                q, k, v, cu_q[chunk], cu_k[chunk], lengths_k[chunk], scale
            )
    for index in torch.nonzero(lengths_q > 1).flatten().tolist():
        start_q, end_q = int(cu_q[index]), int(cu_q[index + 1])
        start_k, end_k = int(cu_k[index]), int(cu_k[index + 1])
        queries, keys = end_q - start_q, end_k - start_k
        # Query i sits at position keys - queries + i and sees every key up to it.
        mask = torch.ones(queries, keys, dtype=torch.bool, device=q.device).tril(keys - queries)
        attended = F.scaled_dot_product_attention(
            q[start_q:end_q].transpose(0, 1),
            k[start_k:end_k].transpose(0, 1),
            v[start_k:end_k].transpose(0, 1),
            attn_mask=mask,
            scale=scale,
            enable_gqa=True,
        )
        out[start_q:end_q] = attended.transpose(0, 1)
    return out


def _single_query_attention(q, k, v, starts_q, starts_k, lengths_k, scale: float):
    """One query per sequence over its keys, padded to the longest and masked: [n, heads, dim]."""
    positions = torch.arange(int(lengths_k.max()), device=q.device)
    valid = positions[None, :] < lengths_k[:, None]  # [n, longest]
    index = (starts_k.long()[:, None] + positions[None, :]).clamp(max=k.shape[0] - 1)
    keys, values = (tensor[index].transpose(1, 2) for tensor in (k, v))  # [n, heads, longest, dim]
    attended = F.scaled_dot_product_attention(
        q[starts_q.long()].unsqueeze(2),  # [n, heads, 1, dim]
        keys,
        values,
        attn_mask=valid[:, None, None, :],
        scale=scale,
        enable_gqa=True,
    )
    return attended.squeeze(2)


def _heads_repeated(tensor: torch.Tensor, heads: int) -> torch.Tensor:
    """Key or value heads repeated to the query's head count (grouped-query attention)."""
    repeats = heads // tensor.shape[1]
    return tensor if repeats == 1 else tensor.repeat_interleave(repeats, dim=1)


AttentionInterface.register(VARLEN_ATTENTION, varlen_attention_forward)
