"""Decoding through any OpenAI-compatible inference server (vLLM, SGLang, TGI, llama.cpp's
server, `transformers serve`), behind the engine interface of `generation.engines.base`.

The server writes continuations; everything else stays in process: the prompting
strategies render the prompts, `generation.polyjuice` parses the answers, and the
fluency filter scores them with a local model.

Which API. Base models get the completions API (`POST {base}/completions`) with the
prompt as it is. Instruction models get the chat API (`POST {base}/chat/completions`)
with the same prompt as the user's message, under a system message asking for the
continuation only; an echo of the prompt's ending at the start of the reply is removed,
so the same strategy parses both. `api="auto"` picks chat when the model's name says it
is an instruction model: it contains "instruct" or "chat", or "it" stands alone between
separators ("gemma-2-9b-it", "gemma-3-1b-it-qat"); completions otherwise.

Where servers differ, and how this engine copes:
- `n` (choices per request): some ignore it and return one choice (`transformers serve`),
  some refuse it; missing choices are asked for again, one request per choice after a
  refusal.
- stop sequences: some keep the stop text in the reply; continuations are cut here at the
  newline and after the needed [ANSWER] markers either way.
- a list of prompts in one completions request: vLLM and SGLang take one (choices
  numbered prompt by prompt); others refuse it or do not say. Only servers whose `/models`
  listing names them get lists (see `ServerEngine`).
- `top_k` is not part of the OpenAI API, and several servers refuse unknown fields, so
  the server's own default applies; temperature, top_p and the seed are sent.
- beam search has no OpenAI-compatible form: asking for it is an error.
- what the model may write (`generation.constraints`) is not enforced: `logit_bias` is
  keyed by the server's token ids and capped in size, so it is not sent; the parser
  drops any continuation holding a marker, bracket or special token.

Failures: connection errors, timeouts, HTTP 408, 429 and 5xx, and replies that are not the
expected JSON are retried with exponential backoff; any other 4xx fails at once. What
is raised is an `InferenceServerError` naming the URL and quoting the server; the API
key is read from the environment for each `generate` or `probe` and never appears in a
message or a log line (it is blanked out should a server repeat it).
"""

import json
import logging
import re
import threading
import urllib.parse
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from transformers import AutoTokenizer

from generation.decoding import DecodingConfig, PromptParts
from generation.engines.base import ResultHook, ServerConfig
from generation.engines.server_http import KeepAliveClient, Reply, TransportError
from generation.models import default_model_directory
from generation.tokens import ANSWER

logger = logging.getLogger(__name__)

# Names of instruction-tuned models: "...-Instruct", "...-chat-hf", "gemma-2-9b-it".
_INSTRUCTION_NAME = re.compile(r"instruct|chat|(?:^|[-_./])it(?:$|[-_.:@])")
CHAT_INSTRUCTION = (
    "Continue the text the user sends, following the pattern of its examples. "
    "Reply with the continuation only: the text that comes right after the user's last "
    "line, on one line, without repeating anything the user wrote."
)
# Lines at the end of a prompt that a chat reply may repeat before its continuation.
_ECHO_LINES = 2
# Seeds stay within a signed 32-bit integer, which every server accepts.
_SEED_RANGE = 2**31
# Longest wait honoured from a Retry-After header, in seconds.
_MAX_RETRY_AFTER = 60.0
# Models named when the probe does not find the one asked for.
_MODELS_SHOWN = 10
# Servers that take a list of prompts in one completions request, by `owned_by`, and
# how many prompts a request then carries.
_LIST_SERVERS = {"vllm", "sglang"}
PROMPTS_PER_REQUEST = 8
# Which server a /models listing comes from, by its `owned_by`.
_SERVER_KINDS = {"vllm": "vLLM", "sglang": "SGLang", "llamacpp": "llama.cpp", "openai": "OpenAI"}


class InferenceServerError(RuntimeError):
    """An inference server could not be reached or refused a request.

    The message names the URL (without credentials) and quotes the server; `status` is
    the HTTP status of the last failed answer (None when none came, or it was not the
    expected JSON) and `server_message` what the server said, or why nothing came.
    """

    def __init__(self, message: str, *, status: int | None = None, server_message: str = ""):
        super().__init__(message)
        self.status = status
        self.server_message = server_message


def is_instruction_model(model: str) -> bool:
    """True when the model's name says it is instruction-tuned (see the module docstring)."""
    return bool(_INSTRUCTION_NAME.search(model.lower()))


def resolve_api(config: ServerConfig) -> str:
    """`completions` or `chat`: the one configured, or for `auto` the one the name suggests."""
    if config.api != "auto":
        return config.api
    return "chat" if is_instruction_model(config.model) else "completions"


def public_url(url: str) -> str:
    """The URL without user, password or query, fit for a message or a log line."""
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class _Failure:
    """Why one try failed."""

    text: str  # for the log and the final message, e.g. "HTTP 500: out of memory"
    status: int | None = None  # the HTTP status, when the server answered
    said: str = ""  # the server's own message, when it gave one
    retry: bool = True  # False for a refusal that another try would not change
    wait: float = 0.0  # seconds the server asked to wait (Retry-After)


class _Connection:
    """One HTTP client for a server: the key, the timeout, the retries and the error messages.

    Safe to share between threads. Setting `abort` makes waiting retries give up, so a
    failed batch does not sit out every other prompt's backoff.
    """

    def __init__(self, config: ServerConfig, *, retries: int | None = None):
        self.config = config
        self.base = config.base_url.rstrip("/")
        self.retries = config.retries if retries is None else retries
        self.abort = threading.Event()
        self._key = config.api_key()
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        try:
            self._client = KeepAliveClient(self.base, headers=headers, timeout=config.timeout)
        except ValueError:
            raise InferenceServerError(
                f"{public_url(self.base)!r} is not an inference server URL: it needs "
                "http:// or https:// and a host, e.g. http://gpu-box:8000/v1."
            ) from None

    def __enter__(self) -> "_Connection":
        return self

    def __exit__(self, *exc_info) -> None:
        self._client.close()

    def url(self, path: str) -> str:
        return public_url(self.base + path)

    def request(
        self,
        method: str,
        path: str,
        body: dict | None = None,
        read: Callable[[Any], Any] = lambda payload: payload,
    ) -> Any:
        """`read(payload)` of the server's JSON reply; retried as the module docstring says.

        `read` raises KeyError, TypeError or ValueError when the reply lacks what it needs,
        which counts as a malformed reply.
        """
        url = self.url(path)
        failure = _Failure("stopped before the first try")
        tries = 0
        for attempt in range(self.retries + 1):
            if attempt:
                delay = max(self.config.backoff * 2 ** (attempt - 1), failure.wait)
                logger.warning(
                    "%s %s failed (%s); retry %d of %d in %.2f s",
                    method,
                    url,
                    failure.text,
                    attempt,
                    self.retries,
                    delay,
                )
                if self.abort.wait(delay):
                    break
            elif self.abort.is_set():
                break
            tries += 1
            result, failure = self._attempt(method, path, body, read)
            if failure is None:
                return result
            if not failure.retry:
                raise InferenceServerError(
                    f"The inference server at {url} refused the request "
                    f"(HTTP {failure.status}): {failure.said}",
                    status=failure.status,
                    server_message=failure.said,
                )
        raise InferenceServerError(
            f"The inference server at {url} failed after {tries} "
            f"{'try' if tries == 1 else 'tries'}: {failure.text}",
            status=failure.status,
            server_message=failure.said or failure.text,
        )

    def try_once(self, method: str, path: str, read: Callable[[Any], Any]) -> Any:
        """`read(payload)` of one try's reply, or None if it failed for any reason."""
        result, failure = self._attempt(method, path, None, read)
        return None if failure else result

    def _attempt(
        self, method: str, path: str, body: dict | None, read: Callable[[Any], Any]
    ) -> "tuple[Any, _Failure | None]":
        """One try: (what `read` made of the reply, None), or (None, why it failed)."""
        try:
            response = self._client.request(method, path, body)
        except TransportError as error:
            if error.kind == "timeout":
                return None, _Failure(f"no answer within {self.config.timeout:g} s")
            if error.kind == "connect":
                return None, _Failure(self._scrub(f"cannot connect ({error.reason})"))
            return None, _Failure(self._scrub(f"the connection failed ({error.reason})"))
        status = response.status_code
        if status >= 400:
            said = self._scrub(_server_message(response))
            passing = status in (408, 429) or status >= 500
            return None, _Failure(
                f"HTTP {status}: {said}",
                status=status,
                said=said,
                retry=passing,
                wait=_retry_after(response) if passing else 0.0,
            )
        try:
            return read(response.json()), None
        except (KeyError, TypeError, ValueError, IndexError):
            return None, _Failure(self._scrub(f"malformed reply: {_excerpt(response.text)}"))

    def _scrub(self, text: str) -> str:
        """The text with the API key blanked out, should a server or error repeat it."""
        return text.replace(self._key, "***") if self._key else text


def _server_message(response: Reply) -> str:
    """What the server said about a failure: OpenAI's `error.message`, FastAPI's `detail`,
    TGI's `error`, else a short excerpt of the body."""
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str) and error:
            return error
        if isinstance(payload.get("message"), str) and payload["message"]:
            return payload["message"]
        detail = payload.get("detail")
        if detail:
            return detail if isinstance(detail, str) else _excerpt(json.dumps(detail))
    return _excerpt(response.text) or "(empty body)"


def _excerpt(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _retry_after(response: Reply) -> float:
    """Seconds the server asked to wait before a retry (a numeric Retry-After), else 0."""
    try:
        return min(_MAX_RETRY_AFTER, max(0.0, float(response.headers.get("retry-after", 0))))
    except ValueError:
        return 0.0  # an HTTP date: the backoff will do


def _strip_echo(prompt: str, reply: str) -> str:
    """The reply without a repeat of the prompt's ending, which chat models often write
    before the continuation (`[negation] The soup was...` after a prompt ending in
    `[negation]`). The longest ending of the prompt's last lines that starts at a word
    and that the reply starts with is removed."""
    reply = reply.lstrip()
    tail = "\n".join(prompt.rstrip().split("\n")[-_ECHO_LINES:])
    starts = [i for i in range(len(tail)) if i == 0 or tail[i - 1].isspace()]
    for start in starts:
        ending = tail[start:].strip()
        if ending and reply.startswith(ending):
            return reply[len(ending) :]
    return reply


def _cut_after_answers(text: str, needed: int) -> str:
    """The text up to and including its `needed`-th [ANSWER] marker."""
    pieces = text.split(ANSWER)
    if needed < 1 or len(pieces) <= needed:
        return text
    return ANSWER.join(pieces[:needed]) + ANSWER


def _request_groups(budgets: list[int], needed: list[int], limit: int) -> list[list[int]]:
    """Prompt indices in groups of at most `limit` consecutive prompts with the same token
    budget and number of needed answers (one request's worth)."""
    groups: list[list[int]] = []
    for index, key in enumerate(zip(budgets, needed, strict=True)):
        last = groups[-1] if groups else None
        if last and len(last) < limit and (budgets[last[0]], needed[last[0]]) == key:
            last.append(index)
        else:
            groups.append([index])
    return groups


def _indexed_texts(payload: Any) -> list[tuple[int, str]]:
    """(index, text) of each choice of a completions reply (a choice without an index has
    its place in the list)."""
    choices = payload["choices"]
    if not isinstance(choices, list) or not choices:
        raise ValueError("no choices")
    pairs = [(int(choice.get("index", at)), choice["text"]) for at, choice in enumerate(choices)]
    if not all(isinstance(text, str) for _, text in pairs):
        raise TypeError("a choice's text is not a string")
    return pairs


def _by_prompt(choices: list[tuple[int, str]], prompts: int, wanted: int) -> list[list[str]] | None:
    """The choices of a reply to a list of prompts, by prompt: the OpenAI API numbers the
    `wanted` choices of prompt i from i * wanted; a server that ignores `n` returns one
    choice a prompt, numbered i. None when the numbering fits neither."""
    indices = sorted(index for index, _ in choices)
    texts = dict(choices)
    if indices == list(range(prompts * wanted)):
        return [[texts[i * wanted + j] for j in range(wanted)] for i in range(prompts)]
    if wanted > 1 and indices == list(range(prompts)):
        return [[texts[i]] for i in range(prompts)]  # the top-up asks for the rest
    return None


_TOKENIZERS: dict[str, object] = {}
_TOKENIZERS_LOCK = threading.Lock()


def server_tokenizer(model: str):
    """A tokenizer for prompt budgets and strategy choice, loaded once per model name.

    The served model's own when its name is a local directory or is in the Hugging Face
    cache (nothing is downloaded); else the packaged default model's, so budgets are
    counted in its tokens instead.
    """
    with _TOKENIZERS_LOCK:
        if model not in _TOKENIZERS:
            _TOKENIZERS[model] = _load_tokenizer(model)
        return _TOKENIZERS[model]


def _load_tokenizer(model: str):
    try:
        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
    except (OSError, ValueError) as error:  # not on this machine, or not a valid name here
        directory = default_model_directory()
        logger.info(
            "No local tokenizer for the served model %s (%s); budgeting with %s's",
            model,
            type(error).__name__,
            directory,
        )
        return AutoTokenizer.from_pretrained(directory, local_files_only=True)
    logger.info("Budgeting prompts for the served model %s with its own tokenizer", model)
    return tokenizer


class ServerEngine:
    """`per_prompt` continuations of each prompt from an OpenAI-compatible server.

    At most `config.concurrency` requests are in flight; each prompt's continuations are
    reported through `on_result` (in the calling thread) as soon as they are all in.

    Servers known to take a list of prompts in one completions request (vLLM and SGLang,
    by the `owned_by` of the model in their `/models` listing, read once per engine) get up
    to `PROMPTS_PER_REQUEST` prompts a request: the client and the server's HTTP front end
    then handle an eighth of the requests, and the server still schedules every sequence
    on its own. Only prompts with the same token budget share a request. Any other server,
    and the chat API, get one prompt a request; so does a server that refuses a list or
    answers one with choices that cannot be matched to its prompts (those prompts are
    asked for again one by one).
    """

    name = "server"

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.model_name = config.model
        self.api = resolve_api(config)
        self._single_choice = False  # set once the server refuses `n`
        self._batching: bool | None = None  # whether the server takes lists; None: not asked

    @property
    def tokenizer(self):
        return server_tokenizer(self.config.model)

    def generate(
        self,
        prompts: list[str | PromptParts],
        max_new_tokens: list[int],
        config: DecodingConfig,
        *,
        answers_needed: list[int] | None = None,
        stop_at_newline: bool = False,
        on_result: ResultHook | None = None,
    ) -> list[list[str]]:
        if config.num_beams > 1:
            raise ValueError(
                "Beam search (num_beams > 1) is not available through an inference server; "
                "sample or decode greedily, or use an in-process engine (loop, continuous)."
            )
        if not prompts:
            return []
        texts = [prompt.text if isinstance(prompt, PromptParts) else prompt for prompt in prompts]
        needed = answers_needed or [0] * len(prompts)
        results: list[list[str]] = [[] for _ in prompts]
        with _Connection(self.config) as connection:
            groups = _request_groups(max_new_tokens, needed, PROMPTS_PER_REQUEST)
            if len(groups) < len(prompts) and not self._takes_lists(connection):
                groups = [[index] for index in range(len(prompts))]
            workers = min(self.config.concurrency, len(groups))
            with ThreadPoolExecutor(workers, thread_name_prefix="inference-server") as pool:
                futures = [
                    pool.submit(
                        self._group,
                        connection,
                        group,
                        [texts[index] for index in group],
                        max_new_tokens[group[0]],
                        needed[group[0]],
                        config,
                        stop_at_newline,
                    )
                    for group in groups
                ]
                try:
                    for future in as_completed(futures):
                        for index, continuations in future.result().items():
                            results[index] = continuations
                            if on_result:
                                on_result(index, continuations)
                except BaseException:
                    # Nothing half-written: stop the other prompts and let the caller discard all.
                    connection.abort.set()
                    for future in futures:
                        future.cancel()
                    raise
        return results

    def _takes_lists(self, connection: "_Connection") -> bool:
        """Whether the server takes a list of prompts (asked once, when prompts could share
        a request: one try, no retries)."""
        if self.api != "completions":
            return False
        if self._batching is None:
            served = connection.try_once("GET", "/models", read=_listed_models) or {}
            self._batching = served.get(self.config.model, "").lower() in _LIST_SERVERS
            if self._batching:
                logger.info("%s takes lists of prompts", connection.url(""))
        return self._batching

    def _group(
        self,
        connection: "_Connection",
        indices: list[int],
        prompts: list[str],
        max_tokens: int,
        needed: int,
        config: DecodingConfig,
        stop_at_newline: bool,
    ) -> dict[int, list[str]]:
        """The continuations of a group of prompts, by prompt index: one request for the
        whole group when it has several prompts and the server takes lists; else (or when
        the server cannot answer the list) one prompt at a time."""
        drawn: list[list[str]] = [[] for _ in indices]
        if len(indices) > 1 and self._batching:
            listed = self._listed(
                connection, indices[0], prompts, max_tokens, config, stop_at_newline
            )
            drawn = listed or drawn
        return {
            index: self._continuations(
                connection, index, prompt, max_tokens, needed, config, stop_at_newline, drawn=first
            )
            for index, prompt, first in zip(indices, prompts, drawn, strict=True)
        }

    def _listed(
        self,
        connection: "_Connection",
        first: int,
        prompts: list[str],
        max_tokens: int,
        config: DecodingConfig,
        stop_at_newline: bool,
    ) -> list[list[str]] | None:
        """Each prompt's continuations from one request with the list of prompts, or None
        when the server refused the list or its choices cannot be told apart by prompt
        (the server is then asked one prompt at a time from now on)."""
        wanted = config.per_prompt if config.do_sample else 1
        seed = None
        if config.do_sample and config.seed is not None:
            seed = (config.seed + first * config.per_prompt) % _SEED_RANGE
        body = self._body(prompts, max_tokens, config, wanted, seed, stop_at_newline)
        try:
            choices = connection.request("POST", "/completions", body, read=_indexed_texts)
        except InferenceServerError as error:
            if error.status not in (400, 413, 422):
                raise
            choices = None
        per_prompt = _by_prompt(choices, len(prompts), wanted) if choices else None
        if per_prompt is None:
            self._batching = False
            logger.info(
                "%s did not answer a list of prompts as expected; one prompt per request",
                connection.url(""),
            )
        return per_prompt

    def _continuations(
        self,
        connection: _Connection,
        index: int,
        prompt: str,
        max_tokens: int,
        needed: int,
        config: DecodingConfig,
        stop_at_newline: bool,
        *,
        drawn: list[str] | None = None,
    ) -> list[str]:
        """One prompt's `per_prompt` continuations, asking again until enough choices came
        (`drawn`: those already in, from a request for a list of prompts).

        Greedy decoding gives one text per prompt, asked for once and repeated. Each request
        gets its own seed (the run's seed, offset by prompt and by choices already drawn), so a
        server that honours seeds gives different samples, and the same ones in every run.
        """
        wanted = config.per_prompt if config.do_sample else 1
        drawn = list(drawn or [])
        while len(drawn) < wanted:
            choices = 1 if self._single_choice else wanted - len(drawn)
            seed = None
            if config.do_sample and config.seed is not None:
                seed = (config.seed + index * config.per_prompt + len(drawn)) % _SEED_RANGE
            body = self._body(prompt, max_tokens, config, choices, seed, stop_at_newline)
            try:
                drawn += self._ask(connection, body)
            except InferenceServerError as error:
                if choices == 1 or error.status not in (400, 422):
                    raise
                # A server that refuses `n`: one choice per request from now on.
                drawn += self._ask(connection, {k: v for k, v in body.items() if k != "n"})
                self._single_choice = True
                logger.info("%s refuses `n`; asking one choice per request", connection.url(""))
        texts = [self._tidy(prompt, text, needed, stop_at_newline) for text in drawn[:wanted]]
        return texts if config.do_sample else texts * config.per_prompt

    def _body(
        self,
        prompt: str | list[str],
        max_tokens: int,
        config: DecodingConfig,
        choices: int,
        seed: int | None,
        stop_at_newline: bool,
    ) -> dict:
        body: dict[str, Any] = {"model": self.config.model}
        if self.api == "chat":
            body["messages"] = [
                {"role": "system", "content": CHAT_INSTRUCTION},
                {"role": "user", "content": prompt},
            ]
        else:
            body["prompt"] = prompt
            # Not for chat: a reply that opens with a newline would stop empty there.
            if stop_at_newline:
                body["stop"] = ["\n"]
        body["max_tokens"] = max_tokens
        if choices > 1:
            body["n"] = choices
        if config.do_sample:
            body["temperature"] = config.temperature
            body["top_p"] = config.top_p
        else:
            body["temperature"] = 0.0
        if seed is not None:
            body["seed"] = seed
        return body

    def _ask(self, connection: _Connection, body: dict) -> list[str]:
        path = "/chat/completions" if self.api == "chat" else "/completions"
        return connection.request("POST", path, body, read=self._read_choices)

    def _read_choices(self, payload: Any) -> list[str]:
        choices = payload["choices"]
        if not isinstance(choices, list) or not choices:
            raise ValueError("no choices")
        if self.api == "chat":
            texts = [choice["message"]["content"] or "" for choice in choices]
        else:
            texts = [choice["text"] for choice in choices]
        if not all(isinstance(text, str) for text in texts):
            raise TypeError("a choice's text is not a string")
        return texts

    def _tidy(self, prompt: str, text: str, needed: int, stop_at_newline: bool) -> str:
        """The continuation as the in-process engines give it: no echo, ended at the
        newline or after the needed [ANSWER] markers."""
        if self.api == "chat":
            text = _strip_echo(prompt, text)
        if stop_at_newline:
            text = text.split("\n", 1)[0]
        return _cut_after_answers(text, needed)


def probe(config: ServerConfig) -> str:
    """Check that the server answers and serves the model; a short description if so.

    No retries: `GET {base}/models` and the model among those listed; where the server
    has no such endpoint, a one-token request for the model instead. Raises
    InferenceServerError saying what is wrong (no answer, a refused key, an unknown model).
    """
    api = resolve_api(config)
    with _Connection(config, retries=0) as connection:
        try:
            served = connection.request("GET", "/models", read=_listed_models)
        except InferenceServerError as error:
            if error.status not in (404, 405):
                raise
            _probe_one_token(connection, config, api)
            kind = "OpenAI-compatible server"
        else:
            if config.model not in served:
                names = sorted(served)
                listed = ", ".join(names[:_MODELS_SHOWN]) or "none"
                if len(names) > _MODELS_SHOWN:
                    listed += f" and {len(names) - _MODELS_SHOWN} more"
                raise InferenceServerError(
                    f"The inference server at {connection.url('')} does not serve the model "
                    f"{config.model!r}; it serves: {listed}."
                )
            kind = _SERVER_KINDS.get(served[config.model].lower(), "OpenAI-compatible server")
        return f"{kind} at {connection.url('')}: model {config.model} ({api} API)"


def _listed_models(payload: Any) -> dict[str, str]:
    """Model id -> owner, from an OpenAI /models listing."""
    return {str(entry["id"]): str(entry.get("owned_by") or "") for entry in payload["data"]}


def _probe_one_token(connection: _Connection, config: ServerConfig, api: str) -> None:
    """Ask for one token, for a server that lists no models; a refusal naming the model
    is about the model, a 404 that does not is about the URL."""
    path = "/chat/completions" if api == "chat" else "/completions"
    body: dict[str, Any] = {"model": config.model, "max_tokens": 1}
    if api == "chat":
        body["messages"] = [{"role": "user", "content": "Hello"}]
    else:
        body["prompt"] = "Hello"
    try:
        connection.request("POST", path, body, read=lambda payload: payload["choices"])
    except InferenceServerError as error:
        if error.status in (400, 404, 422) and config.model in error.server_message:
            raise InferenceServerError(
                f"The inference server at {connection.url('')} does not accept the model "
                f"{config.model!r}: {error.server_message}",
                status=error.status,
                server_message=error.server_message,
            ) from None
        if error.status == 404:
            raise InferenceServerError(
                f"Nothing answers at {connection.url(path)} (HTTP 404): check the URL; "
                "OpenAI-compatible servers usually answer under /v1.",
                status=404,
                server_message=error.server_message,
            ) from None
        raise
