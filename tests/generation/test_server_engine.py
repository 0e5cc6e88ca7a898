import logging
import threading
import time

import pytest

from generation import pipeline
from generation.decoding import DecodingConfig, PromptParts
from generation.engines import ServerConfig, make_engine
from generation.engines.server import (
    CHAT_INSTRUCTION,
    InferenceServerError,
    ServerEngine,
    probe,
    resolve_api,
)
from generation.models import default_model_directory
from generation.pipeline import PipelineSettings, run_polyjuice
from generation.polyjuice import PerturbTarget, PolyjuiceSettings
from generation.records import OriginalRecord
from tests.generation.server_fixtures import (
    Received,
    Reply,
    StubServer,
    TransformersServer,
    chat_completion,
    completion,
    error,
    free_port,
)
from tests.generation.tiny_models import default_model_cache, tiny_lm_directory

KEY_ENV = "CFANNOTATE_TEST_SERVER_KEY"
SAMPLE = DecodingConfig(per_prompt=2, seed=7)
REWRITE_PROMPT = "Sentence: The soup was warm.\n[negation]"


def _config(url: str, **settings) -> ServerConfig:
    settings.setdefault("model", "base-model")
    settings.setdefault("api", "completions")
    settings.setdefault("retries", 2)
    settings.setdefault("backoff", 0.01)
    settings.setdefault("timeout", 5.0)
    return ServerConfig(base_url=url, **settings)


def _always(reply: Reply):
    return lambda received: reply


def _in_turn(*replies: Reply):
    """The replies one after another, the last one for every request after it."""
    queue = list(replies)
    return lambda received: queue.pop(0) if len(queue) > 1 else queue[0]


# --- requests: what is sent, what comes back --------------------------------------------


def test_completions_request_carries_the_prompt_and_the_sampling_settings():
    with StubServer(_always(Reply(body=completion(" not warm", " cold")))) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=1))
        prompts = [PromptParts("Examples.\n", "Sentence: x\n", "[negation]"), "plain prompt"]

        results = engine.generate(prompts, [5, 9], SAMPLE, stop_at_newline=True)

    assert results == [[" not warm", " cold"], [" not warm", " cold"]]
    assert [request.path for request in stub.received] == ["/v1/completions"] * 2
    first, second = stub.posted()
    assert first == {
        "model": "base-model",
        "prompt": "Examples.\nSentence: x\n[negation]",
        "stop": ["\n"],
        "max_tokens": 5,
        "n": 2,
        "temperature": 1.0,
        "top_p": 0.9,
        "seed": 7,
    }
    assert second["prompt"] == "plain prompt" and second["max_tokens"] == 9
    assert second["seed"] == 9  # the run's seed, offset by the samples before it


def test_greedy_decoding_asks_once_at_temperature_zero_and_repeats_the_text():
    with StubServer(_always(Reply(body=completion(" not warm")))) as stub:
        engine = ServerEngine(_config(stub.url))
        greedy = DecodingConfig(do_sample=False, per_prompt=3)

        results = engine.generate([REWRITE_PROMPT], [8], greedy)

    assert results == [[" not warm"] * 3]
    (body,) = stub.posted()
    assert body["temperature"] == 0.0
    assert "n" not in body and "top_p" not in body and "seed" not in body


def test_beam_search_is_refused_before_any_request():
    engine = ServerEngine(_config(f"http://127.0.0.1:{free_port()}/v1"))

    with pytest.raises(ValueError, match="Beam search"):
        engine.generate([REWRITE_PROMPT], [8], DecodingConfig(num_beams=4, do_sample=False))


def test_missing_choices_are_asked_for_with_more_requests_each_with_its_own_seed():
    # Like `transformers serve`: `n` is ignored, one choice comes back.
    def one_choice(received: Received) -> Reply:
        return Reply(body=completion(f" draw {received.body['seed']}"))

    with StubServer(one_choice) as stub:
        engine = ServerEngine(_config(stub.url))

        results = engine.generate([REWRITE_PROMPT], [8], DecodingConfig(per_prompt=3, seed=7))

    assert results == [[" draw 7", " draw 8", " draw 9"]]
    assert [body.get("n") for body in stub.posted()] == [3, 2, None]


def test_a_server_that_refuses_n_gets_one_choice_per_request():
    def no_n(received: Received) -> Reply:
        if received.body.get("n", 1) > 1:
            return Reply(400, error("n must be 1"))
        return Reply(body=completion(f" draw {received.body['seed']}"))

    with StubServer(no_n) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=1))

        results = engine.generate(["a", "b"], [4, 4], DecodingConfig(per_prompt=3, seed=0))

    assert results == [[" draw 0", " draw 1", " draw 2"], [" draw 3", " draw 4", " draw 5"]]
    assert [body.get("n") for body in stub.posted()] == [3] + [None] * 6


def test_answers_are_cut_after_the_markers_the_prompt_needs():
    text = " a [ANSWER] b [ANSWER] c [ANSWER] and more"
    with StubServer(_always(Reply(body=completion(text)))) as stub:
        engine = ServerEngine(_config(stub.url))
        greedy = DecodingConfig(do_sample=False, per_prompt=1)

        results = engine.generate(["p1", "p2", "p3"], [8, 8, 8], greedy, answers_needed=[2, 0, 5])

    assert results == [[" a [ANSWER] b [ANSWER]"], [text], [text]]


def test_a_newline_the_server_kept_ends_the_continuation():
    # `transformers serve` keeps the stop text; OpenAI's servers drop it.
    reply = Reply(body=completion(" The soup was not warm.\nSentence: next"))
    with StubServer(_always(reply)) as stub:
        engine = ServerEngine(_config(stub.url))

        results = engine.generate([REWRITE_PROMPT], [8], SAMPLE, stop_at_newline=True)

    assert results == [[" The soup was not warm."] * 2]


def test_on_result_reports_each_prompt_once_in_the_calling_thread_as_it_completes():
    # The first prompt is the slowest, so results come back out of order.
    def slow_first(received: Received) -> Reply:
        delay = 0.3 if received.body["prompt"] == "p0" else 0.0
        return Reply(body=completion(received.body["prompt"] + "!"), delay=delay)

    reported: list[tuple[int, list[str], int]] = []
    with StubServer(slow_first) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=4))
        greedy = DecodingConfig(do_sample=False, per_prompt=2)

        results = engine.generate(
            [f"p{i}" for i in range(4)],
            [4] * 4,
            greedy,
            on_result=lambda i, texts: reported.append((i, texts, threading.get_ident())),
        )

    assert results == [[f"p{i}!"] * 2 for i in range(4)]
    assert sorted(index for index, _, _ in reported) == [0, 1, 2, 3]
    assert reported[-1][0] == 0
    assert all(texts == results[index] for index, texts, _ in reported)
    assert {thread for _, _, thread in reported} == {threading.get_ident()}


def test_no_more_requests_are_in_flight_than_the_concurrency():
    with StubServer(_always(Reply(body=completion(" x"), delay=0.1))) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=2))

        engine.generate([f"p{i}" for i in range(6)], [4] * 6, DecodingConfig(do_sample=False))

    assert len(stub.posted()) == 6
    assert stub.most_in_flight == 2


# --- several prompts a request (vLLM, SGLang) ---------------------------------------------


def _list_server(owner: str = "vllm", choices_of=None):
    """A server listing base-model as `owner`'s that answers a list of prompts as the OpenAI
    API numbers it (prompt i's choice j at i * n + j), choices sent in reverse order;
    `choices_of(prompts, n)` replaces the (index, text) pairs it sends for a list. One
    prompt gets `n` choices " prompt/j"."""

    def respond(received: Received) -> Reply:
        if received.method == "GET":
            return Reply(body=_listing("base-model", owner=owner))
        body = received.body
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        n = body.get("n", 1)
        if not isinstance(body["prompt"], list):
            return Reply(body=completion(*(text for _, text in _numbered(prompts, n))))
        pairs = (choices_of or _numbered)(prompts, n)
        return Reply(body={"choices": [{"index": i, "text": t} for i, t in reversed(pairs)]})

    return respond


def _numbered(prompts: list[str], n: int) -> list[tuple[int, str]]:
    return [(i * n + j, f" {prompt}/{j}") for i, prompt in enumerate(prompts) for j in range(n)]


def test_a_vllm_server_gets_up_to_eight_prompts_a_request():
    reported: list[int] = []
    with StubServer(_list_server()) as stub:
        engine = ServerEngine(_config(stub.url))
        prompts = [f"p{i}" for i in range(10)]

        results = engine.generate(
            prompts, [6] * 10, SAMPLE, on_result=lambda i, texts: reported.append(i)
        )

    assert results == [[f" p{i}/0", f" p{i}/1"] for i in range(10)]
    assert sorted(reported) == list(range(10))
    posted = sorted(stub.posted(), key=lambda body: body["seed"])
    assert [body["prompt"] for body in posted] == [prompts[:8], prompts[8:]]
    assert [(body["n"], body["max_tokens"]) for body in posted] == [(2, 6), (2, 6)]
    assert [body["seed"] for body in posted] == [7, 7 + 8 * 2]  # offset as one by one
    assert [r.method for r in stub.received].count("GET") == 1


def test_only_prompts_with_the_same_budget_and_answers_share_a_request():
    with StubServer(_list_server("sglang")) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=1))

        engine.generate(
            [f"p{i}" for i in range(6)], [5, 5, 9, 9, 9, 9], SAMPLE, answers_needed=[0] * 5 + [1]
        )

    assert [body["prompt"] for body in stub.posted()] == [["p0", "p1"], ["p2", "p3", "p4"], "p5"]


def test_greedy_decoding_asks_for_a_list_once_and_repeats_each_text():
    with StubServer(_list_server()) as stub:
        engine = ServerEngine(_config(stub.url))

        results = engine.generate(["a", "b"], [4, 4], DecodingConfig(do_sample=False, per_prompt=3))

    assert results == [[" a/0"] * 3, [" b/0"] * 3]
    (body,) = stub.posted()
    assert body["temperature"] == 0.0 and "n" not in body and "seed" not in body


@pytest.mark.parametrize("owner", ["llamacpp", "openai", ""])
def test_other_servers_get_one_prompt_a_request_and_are_asked_once(owner):
    with StubServer(_list_server(owner)) as stub:
        engine = ServerEngine(_config(stub.url))

        first = engine.generate(["a", "b", "c"], [4] * 3, SAMPLE)
        engine.generate(["d", "e"], [4] * 2, SAMPLE)

    assert first == [[" a/0", " a/1"], [" b/0", " b/1"], [" c/0", " c/1"]]
    assert all(isinstance(body["prompt"], str) for body in stub.posted())
    assert [r.method for r in stub.received].count("GET") == 1


def test_the_chat_api_never_sends_a_list():
    def chat(received: Received) -> Reply:
        if received.method == "GET":
            return Reply(body=_listing("base-model"))
        return Reply(body=chat_completion(" x", " y"))

    with StubServer(chat) as stub:
        ServerEngine(_config(stub.url, api="chat")).generate(["a", "b"], [4, 4], SAMPLE)

    assert [r.method for r in stub.received] == ["POST", "POST"]


def test_a_refused_list_is_asked_for_one_prompt_at_a_time_from_then_on():
    def no_lists(received: Received) -> Reply:
        if received.method == "POST" and isinstance(received.body["prompt"], list):
            return Reply(400, error("prompt must be a string."))
        return _list_server()(received)

    with StubServer(no_lists) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=1))

        first = engine.generate(["a", "b", "c"], [4] * 3, SAMPLE)
        second = engine.generate(["d", "e"], [4] * 2, SAMPLE)

    assert first == [[" a/0", " a/1"], [" b/0", " b/1"], [" c/0", " c/1"]]
    assert second == [[" d/0", " d/1"], [" e/0", " e/1"]]
    lists = [body for body in stub.posted() if isinstance(body["prompt"], list)]
    assert len(lists) == 1 and len(stub.posted()) == 1 + 5


def test_choices_that_cannot_be_told_apart_by_prompt_are_asked_for_one_by_one():
    def skewed(prompts: list[str], n: int) -> list[tuple[int, str]]:
        return [(i, f" which {i}") for i in range(len(prompts) * n + 1)]  # one too many

    with StubServer(_list_server(choices_of=skewed)) as stub:
        results = ServerEngine(_config(stub.url)).generate(["a", "b"], [4, 4], SAMPLE)

    assert results == [[" a/0", " a/1"], [" b/0", " b/1"]]
    assert [body["prompt"] for body in stub.posted()] == [["a", "b"], "a", "b"]


def test_choices_without_an_index_are_read_in_their_order():
    def unnumbered(received: Received) -> Reply:
        if received.method == "GET":
            return Reply(body=_listing("base-model"))
        prompts = received.body["prompt"]
        return Reply(body={"choices": [{"text": f" {p}/{j}"} for p in prompts for j in range(2)]})

    with StubServer(unnumbered) as stub:
        results = ServerEngine(_config(stub.url)).generate(["a", "b"], [4, 4], SAMPLE)

    for reply in stub.posted():
        assert isinstance(reply["prompt"], list)
    assert results == [[" a/0", " a/1"], [" b/0", " b/1"]]


def test_a_list_server_that_ignores_n_has_each_prompts_choices_topped_up():
    def one_each(prompts: list[str], n: int) -> list[tuple[int, str]]:
        return [(i, f" {prompt}/first") for i, prompt in enumerate(prompts)]

    with StubServer(_list_server(choices_of=one_each)) as stub:
        results = ServerEngine(_config(stub.url, concurrency=1)).generate(
            ["a", "b"], [4, 4], DecodingConfig(per_prompt=3, seed=7)
        )

    assert results == [[" a/first", " a/0", " a/1"], [" b/first", " b/0", " b/1"]]
    tops = stub.posted()[1:]
    assert [(body["prompt"], body["n"], body["seed"]) for body in tops] == [
        ("a", 2, 8),
        ("b", 2, 11),
    ]


def test_make_engine_builds_the_server_engine():
    engine = make_engine("server", server=_config("http://127.0.0.1:1/v1", model="m"))

    assert isinstance(engine, ServerEngine)
    assert (engine.name, engine.model_name) == ("server", "m")


# --- the chat API ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "api"),
    [
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "chat"),
        ("meta-llama/Llama-2-7b-chat-hf", "chat"),
        ("google/gemma-2-9b-it", "chat"),
        ("google/gemma-3-1b-it-qat", "chat"),
        ("uw-hai/polyjuice", "completions"),
        ("gpt2", "completions"),
        ("EleutherAI/pythia-70m-deduped", "completions"),
        ("summit-7b", "completions"),
    ],
)
def test_auto_picks_chat_for_instruction_models_by_name(model, api):
    assert resolve_api(_config("http://127.0.0.1:1/v1", model=model, api="auto")) == api


@pytest.mark.parametrize(
    "reply",
    [
        "The soup was not warm.",
        "[negation] The soup was not warm.",
        "Sentence: The soup was warm.\n[negation] The soup was not warm.\nSentence: more",
        "\n  [negation]The soup was not warm.",
    ],
)
def test_chat_sends_the_prompt_and_strips_an_echo_of_its_ending(reply):
    with StubServer(_always(Reply(body=chat_completion(reply)))) as stub:
        engine = ServerEngine(_config(stub.url, model="some-model-Instruct", api="auto"))

        results = engine.generate([REWRITE_PROMPT], [8], SAMPLE, stop_at_newline=True)

    assert [text.strip() for text in results[0]] == ["The soup was not warm."] * 2
    assert stub.received[0].path == "/v1/chat/completions"
    body = stub.posted()[0]
    assert body["messages"] == [
        {"role": "system", "content": CHAT_INSTRUCTION},
        {"role": "user", "content": REWRITE_PROMPT},
    ]
    assert "stop" not in body  # a reply opening with a newline would stop empty


def test_a_chat_reply_without_content_counts_as_an_empty_continuation():
    body = chat_completion("x")
    body["choices"][0]["message"]["content"] = None
    with StubServer(_always(Reply(body=body))) as stub:
        engine = ServerEngine(_config(stub.url, api="chat"))

        assert engine.generate(["p"], [4], DecodingConfig(do_sample=False)) == [[""] * 3]


# --- failures ----------------------------------------------------------------------------


def test_a_server_that_is_down_fails_after_the_retries_quickly():
    url = f"http://127.0.0.1:{free_port()}/v1"
    engine = ServerEngine(_config(url, retries=2, backoff=0.01))
    started = time.perf_counter()

    with pytest.raises(InferenceServerError) as caught:
        engine.generate([REWRITE_PROMPT], [8], SAMPLE)

    assert time.perf_counter() - started < 5
    message = str(caught.value)
    assert f"{url}/completions" in message
    assert "after 3 tries" in message and "cannot connect" in message


def test_a_slow_server_times_out():
    with StubServer(_always(Reply(body=completion(" x"), delay=1.0))) as stub:
        engine = ServerEngine(_config(stub.url, timeout=0.2, retries=1))

        with pytest.raises(InferenceServerError, match=r"after 2 tries: no answer within 0.2 s"):
            engine.generate([REWRITE_PROMPT], [8], SAMPLE)

    assert len(stub.posted()) == 2


@pytest.mark.parametrize("status", [408, 429, 500, 503])
def test_a_passing_server_error_is_retried(status):
    replies = _in_turn(Reply(status, error("busy")), Reply(body=completion(" a", " b")))
    with StubServer(replies) as stub:
        engine = ServerEngine(_config(stub.url))

        assert engine.generate([REWRITE_PROMPT], [8], SAMPLE) == [[" a", " b"]]

    assert len(stub.posted()) == 2


def test_a_retry_after_header_sets_the_least_wait():
    replies = _in_turn(
        Reply(429, error("slow down"), headers={"Retry-After": "0.3"}),
        Reply(body=completion(" a", " b")),
    )
    with StubServer(replies) as stub:
        engine = ServerEngine(_config(stub.url, backoff=0.01))
        started = time.perf_counter()

        engine.generate([REWRITE_PROMPT], [8], SAMPLE)

    assert time.perf_counter() - started >= 0.3


def test_a_server_that_keeps_failing_is_reported_with_its_own_message():
    reply = Reply(500, error("CUDA out of memory on the server"))
    with StubServer(_always(reply)) as stub:
        engine = ServerEngine(_config(stub.url, retries=2))

        with pytest.raises(InferenceServerError) as caught:
            engine.generate([REWRITE_PROMPT], [8], SAMPLE)

    assert len(stub.posted()) == 3
    message = str(caught.value)
    assert stub.url in message
    assert "HTTP 500: CUDA out of memory on the server" in message


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (error("This model's maximum context length is 2048 tokens"), "maximum context length"),
        ({"detail": "Unexpected fields in the request: {'top_k'}"}, "Unexpected fields"),
        ({"error": "Input validation error", "error_type": "validation"}, "Input validation"),
        (b"<html>Bad Request</html>", "<html>Bad Request</html>"),
    ],
)
def test_a_client_error_fails_at_once_with_the_servers_message(body, said):
    with StubServer(_always(Reply(400, body))) as stub:
        engine = ServerEngine(_config(stub.url, retries=3))

        with pytest.raises(InferenceServerError, match="refused the request") as caught:
            engine.generate([REWRITE_PROMPT], [8], DecodingConfig(do_sample=False))

    assert len(stub.posted()) == 1
    assert caught.value.status == 400
    assert said in str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"choices": [',
        {"choices": []},
        {"choices": [{"index": 0, "finish_reason": "stop"}]},
        {"id": "no choices at all"},
    ],
)
def test_a_malformed_reply_is_retried_then_reported(body):
    with StubServer(_always(Reply(200, body))) as stub:
        engine = ServerEngine(_config(stub.url, retries=1))

        with pytest.raises(InferenceServerError, match="after 2 tries: malformed reply"):
            engine.generate([REWRITE_PROMPT], [8], SAMPLE)

    assert len(stub.posted()) == 2


def test_a_malformed_reply_then_a_good_one_succeeds():
    replies = _in_turn(Reply(200, b"{oops"), Reply(body=completion(" a", " b")))
    with StubServer(replies) as stub:
        engine = ServerEngine(_config(stub.url))

        assert engine.generate([REWRITE_PROMPT], [8], SAMPLE) == [[" a", " b"]]


def test_one_failed_prompt_fails_the_whole_call():
    def second_fails(received: Received) -> Reply:
        if received.body["prompt"] == "bad":
            return Reply(500, error("shard crashed"))
        return Reply(body=completion(" ok"))

    reported = []
    with StubServer(second_fails) as stub:
        engine = ServerEngine(_config(stub.url, concurrency=1, retries=1))

        with pytest.raises(InferenceServerError, match="shard crashed"):
            engine.generate(
                ["good", "bad", "never"],
                [4] * 3,
                DecodingConfig(do_sample=False),
                on_result=lambda index, texts: reported.append(index),
            )

    assert reported == [0]  # reported before the failure; the caller discards the chunk


# --- the API key ---------------------------------------------------------------------------


def test_no_authorization_header_without_a_key(monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    with StubServer(_always(Reply(body=completion(" a", " b")))) as stub:
        ServerEngine(_config(stub.url, api_key_env=KEY_ENV)).generate(["p"], [4], SAMPLE)
        ServerEngine(_config(stub.url)).generate(["p"], [4], SAMPLE)

    assert [request.headers.get("authorization") for request in stub.received] == [None, None]


def test_the_key_is_sent_as_a_bearer_token_and_never_shown(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-s3cret")
    reply = Reply(401, error("Incorrect API key provided: sk-s3cret"))
    with StubServer(_always(reply)) as stub:
        engine = ServerEngine(_config(stub.url, api_key_env=KEY_ENV))

        with pytest.raises(InferenceServerError) as caught:
            engine.generate(["p"], [4], SAMPLE)
        with pytest.raises(InferenceServerError) as probed:
            probe(_config(stub.url, api_key_env=KEY_ENV))

    assert {request.headers["authorization"] for request in stub.received} == {"Bearer sk-s3cret"}
    for failure in (caught.value, probed.value):
        assert "sk-s3cret" not in str(failure) and "sk-s3cret" not in failure.server_message
        assert "Incorrect API key provided: ***" in str(failure)


def test_credentials_in_the_url_stay_out_of_messages():
    url = f"http://user:hunter2@127.0.0.1:{free_port()}/v1?token=hunter3"
    engine = ServerEngine(_config(url, retries=0))

    with pytest.raises(InferenceServerError) as caught:
        engine.generate(["p"], [4], SAMPLE)

    assert "hunter" not in str(caught.value)


# --- probe -------------------------------------------------------------------------------


def _listing(*models: str, owner: str = "vllm") -> dict:
    return {
        "object": "list",
        "data": [{"id": m, "object": "model", "owned_by": owner} for m in models],
    }


def test_probe_describes_a_server_that_lists_the_model():
    with StubServer(_always(Reply(body=_listing("base-model", "other")))) as stub:
        description = probe(_config(stub.url))

    assert description == f"vLLM at {stub.url}: model base-model (completions API)"
    assert [(r.method, r.path) for r in stub.received] == [("GET", "/v1/models")]


def test_probe_refuses_a_model_the_server_does_not_list():
    listing = Reply(body=_listing("served-a", "served-b"))
    with StubServer(_always(listing)) as stub, pytest.raises(InferenceServerError) as caught:
        probe(_config(stub.url, model="typo-model"))

    message = str(caught.value)
    assert "does not serve the model 'typo-model'" in message
    assert "served-a, served-b" in message


def test_probe_names_a_few_of_many_served_models():
    listing = Reply(body=_listing(*(f"model-{i:02d}" for i in range(25))))
    with StubServer(_always(listing)) as stub, pytest.raises(InferenceServerError) as caught:
        probe(_config(stub.url, model="typo-model"))

    assert "model-00, model-01" in str(caught.value)
    assert str(caught.value).endswith("model-09 and 15 more.")


def test_probe_without_a_listing_asks_for_one_token_and_reads_a_refusal():
    def no_listing(received: Received) -> Reply:
        if received.method == "GET":
            return Reply(404, {"detail": "Not Found"})
        return Reply(404, error(f"The model `{received.body['model']}` does not exist."))

    with StubServer(no_listing) as stub, pytest.raises(InferenceServerError) as caught:
        probe(_config(stub.url, model="typo-model"))

    assert "does not accept the model 'typo-model'" in str(caught.value)
    assert "The model `typo-model` does not exist." in str(caught.value)
    assert stub.posted()[0]["max_tokens"] == 1


def test_probe_without_a_listing_accepts_a_model_that_answers():
    def no_listing(received: Received) -> Reply:
        if received.method == "GET":
            return Reply(405, {"detail": "Method Not Allowed"})
        return Reply(body=chat_completion("Hi"))

    with StubServer(no_listing) as stub:
        description = probe(_config(stub.url, api="chat"))

    assert description == f"OpenAI-compatible server at {stub.url}: model base-model (chat API)"


def test_probe_points_at_the_url_when_nothing_answers_there():
    nothing = Reply(404, {"detail": "Not Found"})
    with StubServer(_always(nothing)) as stub, pytest.raises(InferenceServerError, match="URL"):
        probe(_config(stub.url.removesuffix("/v1")))


@pytest.mark.parametrize("url", ["http:///v1", "https://"])
def test_a_url_without_a_host_is_refused_with_an_example(url):
    with pytest.raises(InferenceServerError, match="is not an inference server URL"):
        probe(_config(url))
    with pytest.raises(InferenceServerError, match=r"e\.g\. http://gpu-box:8000/v1"):
        ServerEngine(_config(url)).generate(["p"], [4], SAMPLE)


def test_probe_refuses_a_url_where_no_server_listens():
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.perf_counter()

    with pytest.raises(InferenceServerError, match="after 1 try: cannot connect") as caught:
        probe(_config(url, retries=5, backoff=1.0))

    assert url in str(caught.value)
    assert time.perf_counter() - started < 2  # one try, whatever the retry settings


# --- the tokenizer -------------------------------------------------------------------------


def test_the_tokenizer_of_a_local_model_directory_is_its_own(tmp_path_factory):
    directory = tiny_lm_directory(tmp_path_factory, "gpt2")
    engine = ServerEngine(_config("http://127.0.0.1:1/v1", model=str(directory)))

    assert engine.tokenizer.name_or_path == str(directory)
    assert engine.tokenizer is engine.tokenizer  # loaded once


def test_an_unknown_model_budgets_with_the_packaged_default_tokenizer(
    tmp_path_factory, monkeypatch, caplog
):
    directory = tiny_lm_directory(tmp_path_factory, "llama")
    monkeypatch.setattr("generation.engines.server.default_model_directory", lambda: directory)
    engine = ServerEngine(_config("http://127.0.0.1:1/v1", model="no-such-org/no-such-model-x1"))

    with caplog.at_level(logging.INFO, logger="generation.engines.server"):
        tokenizer = engine.tokenizer

    assert tokenizer.name_or_path == str(directory)
    assert "No local tokenizer for the served model no-such-org/no-such-model-x1" in caplog.text


# --- a real server: `transformers serve` -----------------------------------------------------

TARGETS = [PerturbTarget(OriginalRecord("soup", "The soup was warm and tasty.", "positive"))]


@pytest.fixture(scope="session")
def served(tmp_path_factory) -> TransformersServer:
    """`transformers serve` on CPU with the packaged default model, for the whole session."""
    model_directory = default_model_directory(default_model_cache(tmp_path_factory))
    server = TransformersServer(model_directory, tmp_path_factory.mktemp("serve") / "serve.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def _served_config(served: TransformersServer, **settings) -> ServerConfig:
    settings.setdefault("model", served.model)
    settings.setdefault("timeout", 60.0)
    settings.setdefault("backoff", 0.1)
    return ServerConfig(base_url=served.url, **settings)


@pytest.mark.slow
def test_probe_against_transformers_serve(served):
    description = probe(_served_config(served, api="auto"))

    assert description.endswith(f"model {served.model} (chat API)")  # an -instruct model
    with pytest.raises(InferenceServerError, match="does not serve the model 'smollm2'"):
        probe(_served_config(served, model="smollm2"))


@pytest.mark.slow
def test_transformers_serve_samples_fill_the_choices_it_does_not_return(served):
    # `transformers serve` ignores `n`: each prompt's second sample takes a second request.
    engine = ServerEngine(_served_config(served, api="completions"))
    prompt = (
        "Sentence: The cat slept.\n[negation] The cat did not sleep.\n"
        "Sentence: The soup was warm.\n[negation]"
    )

    results = engine.generate([prompt], [8], SAMPLE, stop_at_newline=True)

    assert len(results) == 1 and len(results[0]) == 2
    assert all(isinstance(text, str) and "\n" not in text for text in results[0])


@pytest.mark.slow
@pytest.mark.parametrize("api", ["completions", "chat"])
def test_the_pipeline_runs_through_transformers_serve(served, api, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"the pipeline loaded a model in process: {args}")

    monkeypatch.setattr(pipeline, "load_cached", refuse)
    settings = PipelineSettings(
        fluency_threshold=None,
        polyjuice=PolyjuiceSettings(
            codes=("negation",),
            random_blank_sets=1,
            max_blanks=1,
            decoding=DecodingConfig(do_sample=False, per_prompt=1, max_new_tokens_cap=16),
            engine="server",
            server=_served_config(served, api=api),
        ),
    )

    result = run_polyjuice(TARGETS, settings)

    assert result.prompts == 2  # the whole-sentence rewrite and one blank set
    assert result.candidates, f"no candidate parsed from {api} replies"
    for candidate in result.candidates:
        assert candidate.record.metadata["engine"] == "server"
        assert candidate.record.metadata["model"] == served.model
        assert candidate.record.metadata["strategy"] == "fewshot"
