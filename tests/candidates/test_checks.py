"""The site's generation defaults: read from the environment, checked at startup."""

import json

from cfannotate.candidates.checks import generation_defaults_check, model_dtype_check
from tests.support import run_manage

UNSET = {key: None for key in ("concurrency", "timeout", "retries")}
SERVER_DEFAULTS = {"url": "", "model": "", "api": "", "api_key_env": "", **UNSET}


def test_the_defaults_pass(settings):
    settings.GENERATION_ENGINE = "auto"
    settings.INFERENCE_SERVER = dict(SERVER_DEFAULTS)
    assert generation_defaults_check(None) == []


def test_an_unknown_engine_is_an_error(settings):
    settings.GENERATION_ENGINE = "vllm"
    settings.INFERENCE_SERVER = dict(SERVER_DEFAULTS)
    [error] = generation_defaults_check(None)
    assert error.id == "candidates.E001" and "'vllm'" in error.msg


def test_bad_server_defaults_are_named_by_their_variables(settings):
    settings.GENERATION_ENGINE = "auto"
    settings.INFERENCE_SERVER = {
        **SERVER_DEFAULTS,
        "url": "gpu-box:8000",
        "api": "grpc",
        "concurrency": 0,
    }
    [error] = generation_defaults_check(None)
    assert error.id == "candidates.E002"
    for variable in (
        "CFANNOTATE_INFERENCE_SERVER_URL",
        "CFANNOTATE_INFERENCE_SERVER_API must",
        "CFANNOTATE_INFERENCE_SERVER_CONCURRENCY",
    ):
        assert variable in error.msg


def test_the_server_engine_without_a_server_is_a_warning(settings):
    settings.GENERATION_ENGINE = "server"
    settings.INFERENCE_SERVER = {**SERVER_DEFAULTS, "model": "org/m"}
    [warning] = generation_defaults_check(None)
    assert warning.id == "candidates.W001"
    settings.INFERENCE_SERVER = {**SERVER_DEFAULTS, "url": "http://gpu:8000/v1", "model": "m"}
    assert generation_defaults_check(None) == []


PRINT_SETTINGS = (
    "import json; from django.conf import settings; print(json.dumps([settings.GENERATION_ENGINE,"
    " settings.INFERENCE_SERVER, settings.INFERENCE_SERVER_API_KEY_ENVS]))"
)


def test_settings_are_read_from_the_environment(tmp_path):
    env = {"CFANNOTATE_STATE_DIR": str(tmp_path)}
    result = run_manage("shell", "-c", PRINT_SETTINGS, env=env)
    assert result.returncode == 0, result.stderr
    engine, server, allowed = json.loads(result.stdout.strip().splitlines()[-1])
    assert engine == "auto" and allowed == []
    assert server == {**SERVER_DEFAULTS}

    env |= {
        "CFANNOTATE_GENERATION_ENGINE": "server",
        "CFANNOTATE_INFERENCE_SERVER_URL": "http://gpu-box:8000/v1",
        "CFANNOTATE_INFERENCE_SERVER_MODEL": "org/m-7b",
        "CFANNOTATE_INFERENCE_SERVER_API": "completions",
        "CFANNOTATE_INFERENCE_SERVER_API_KEY_ENV": "LAB_KEY",
        "CFANNOTATE_INFERENCE_SERVER_API_KEY_ENVS": "OTHER_KEY, LAB_KEY",
        "CFANNOTATE_INFERENCE_SERVER_CONCURRENCY": "8",
        "CFANNOTATE_INFERENCE_SERVER_TIMEOUT": "12.5",
        "CFANNOTATE_INFERENCE_SERVER_RETRIES": "0",
        "LAB_KEY": "sk-never-read-here",
    }
    result = run_manage("shell", "-c", PRINT_SETTINGS, env=env)
    assert result.returncode == 0, result.stderr
    engine, server, allowed = json.loads(result.stdout.strip().splitlines()[-1])
    assert engine == "server" and allowed == ["LAB_KEY", "OTHER_KEY"]
    assert server == {
        "url": "http://gpu-box:8000/v1",
        "model": "org/m-7b",
        "api": "completions",
        "api_key_env": "LAB_KEY",
        "concurrency": 8,
        "timeout": 12.5,
        "retries": 0,
    }
    assert "sk-never-read-here" not in result.stdout + result.stderr


def test_a_bad_value_stops_the_start_with_one_sentence(tmp_path):
    env = {"CFANNOTATE_STATE_DIR": str(tmp_path), "CFANNOTATE_INFERENCE_SERVER_TIMEOUT": "soon"}
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert "CFANNOTATE_INFERENCE_SERVER_TIMEOUT must be a number, not 'soon'" in result.stderr
    assert "Traceback" not in result.stderr
    env = {"CFANNOTATE_STATE_DIR": str(tmp_path), "CFANNOTATE_GENERATION_ENGINE": "vllm"}
    result = run_manage("check", env=env)
    assert result.returncode != 0 and "candidates.E001" in result.stderr


def test_a_bad_dtype_is_an_error_before_any_model_loads(monkeypatch, tmp_path):
    monkeypatch.setenv("CFANNOTATE_DTYPE", "bf16")
    assert model_dtype_check(None) == []
    monkeypatch.setenv("CFANNOTATE_DTYPE", "int8")
    [error] = model_dtype_check(None)
    assert error.id == "candidates.E003" and "'int8' (from CFANNOTATE_DTYPE)" in error.msg
    # `manage.py generate` runs the checks first: no run is created, no traceback.
    env = {"CFANNOTATE_STATE_DIR": str(tmp_path), "CFANNOTATE_DTYPE": "int8"}
    result = run_manage("generate", "1", env=env)
    assert result.returncode != 0 and "candidates.E003" in result.stderr
    assert "Traceback" not in result.stderr
