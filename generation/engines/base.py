"""The one decoding interface: prompts in, `per_prompt` continuations of each out.

Every engine (our own batched loop, transformers' continuous batching, an
OpenAI-compatible inference server) takes the same arguments and honours the same
contract, so the Polyjuice generator, the pipeline and the benchmark never ask which
one runs:

- `generate(prompts, max_new_tokens, config, ...)` returns, in prompt order, a list of
  `config.per_prompt` continuation strings per prompt (text after the prompt, special
  tokens kept as text so the parser can reject them);
- a continuation stops at end of text, at a newline when `stop_at_newline`, after
  `answers_needed[i]` [ANSWER] markers (text past them may be cut off by the engine or
  left for the parser, which reads only up to them), or after `max_new_tokens[i]` tokens;
- `on_result(index, continuations)` is called once per prompt as soon as its
  continuations are complete (engines that finish prompts out of order call it out of
  order), so annotation can overlap with decoding;
- greedy decoding (`do_sample=False`) gives the same text in every in-process engine.

`name` and `model_name` are recorded on every candidate (which backend and model made it).
"""

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from generation.decoding import DecodingConfig, PromptParts

ResultHook = Callable[[int, list[str]], None]

ENGINE_NAMES = ("auto", "loop", "continuous", "server")
SERVER_APIS = ("auto", "completions", "chat")


class Engine(Protocol):
    name: str  # "loop" | "continuous" | "server"
    model_name: str  # the model that writes the continuations
    tokenizer: object  # a transformers tokenizer: prompt budgets and strategy choice

    def generate(
        self,
        prompts: list[str | PromptParts],
        max_new_tokens: list[int],
        config: DecodingConfig,
        *,
        answers_needed: list[int] | None = None,
        stop_at_newline: bool = False,
        on_result: ResultHook | None = None,
    ) -> list[list[str]]: ...


@dataclass(frozen=True)
class ServerConfig:
    """Where an OpenAI-compatible inference server is and how to talk to it.

    The API key is never held here: `api_key_env` names the environment variable
    that holds it, read when a request is made.
    """

    base_url: str  # e.g. http://gpu-box:8000/v1
    model: str  # the model name the server knows
    api: str = "auto"  # completions (base models) | chat (instruction models) | auto
    api_key_env: str = ""  # name of the environment variable holding the key; "" for none
    concurrency: int = 16  # requests in flight at once
    timeout: float = 60.0  # seconds per request
    retries: int = 3  # further tries of a failed request, with exponential backoff
    backoff: float = 1.0  # seconds before the first retry; doubled each time

    def __post_init__(self) -> None:
        problems = server_problems(dataclasses.asdict(self))
        if problems:
            raise ValueError("; ".join(problems) + ".")

    def api_key(self) -> str | None:
        """The key from the environment, or None when no variable is named or it is unset."""
        return os.environ.get(self.api_key_env) or None if self.api_key_env else None


def server_problems(values: dict) -> list[str]:
    """What is wrong with server settings, named by option; only the ones given are checked
    (a site's defaults may leave the URL and model to each campaign)."""
    checks = {
        "base_url": (
            lambda url: str(url).startswith(("http://", "https://")),
            lambda url: f"server_url must start with http:// or https:// (got {url!r})",
        ),
        "model": (
            lambda model: bool(str(model).strip()),
            lambda _: "server_model is required with the server engine",
        ),
        "api": (
            lambda api: api in SERVER_APIS,
            lambda _: f"server_api must be one of {', '.join(SERVER_APIS)}",
        ),
        "concurrency": (lambda n: n >= 1, lambda _: "server_concurrency must be at least 1"),
        "timeout": (lambda seconds: seconds > 0, lambda _: "server_timeout must be positive"),
        "retries": (lambda n: n >= 0, lambda _: "server_retries must be 0 or more"),
    }
    return [
        describe(values[name])
        for name, (holds, describe) in checks.items()
        if name in values and not holds(values[name])
    ]
