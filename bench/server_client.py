"""Benchmark: how many continuations a second the inference-server engine can take in, when
the server is not the limit.

A large model behind vLLM or SGLang answers thousands of short continuations a second; the
engine's client (threads, HTTP, JSON) must keep up. Here a server on loopback answers every
request at once with canned continuations (an asyncio process of its own, `--serve`), and
on the same prompts, in the same run:

- ours, one prompt a request: `ServerEngine.generate` as against `transformers serve`,
  TGI or llama.cpp's server (its /models listing names no server known to take lists);
- ours, lists of prompts: the same, the server listing its model as vLLM's, so up to
  `PROMPTS_PER_REQUEST` prompts share a request;
- baseline (the `ratio`'s denominator): one prompt a request through one `httpx.Client`
  shared by the same number of threads, the engine's transport before 2026-11-27;
- bare `http.client`: one prompt a request, one connection a thread, nothing else (the
  ceiling of one prompt a request).

    python bench/server_client.py                 # 12,000 prompts
    python bench/server_client.py --quick         # 3,000 prompts; ~15 s on 2 cores

Both processes share the machine's cores: on 2 cores the server takes about one. The
last line reads `RESULT server_client ratio=... continuations_per_s=...
listed_continuations_per_s=... httpx_continuations_per_s=...`.
"""

import argparse
import asyncio
import http.client
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

import httpx  # noqa: E402

from bench.inference_server import free_port  # noqa: E402

# The engine (and transformers, which it imports) loads in `ours` only: the server process
# runs this file too, and starts in a fraction of a second without them.

MODEL = "bench-model"
# A continuation as the packaged model writes one for a rewrite prompt.
ANSWER = " The movie was not good at all, and the acting felt flat."
SAMPLES = 3  # continuations a prompt, as the app asks for
BUDGET = 40  # new tokens a prompt


# --- the server ------------------------------------------------------------------------


def serve(port: int, owner: str) -> None:
    """Answer /v1/models (listing MODEL as `owner`'s) and /v1/completions at once."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = json.loads(await reader.readexactly(length)) if length else {}
                if head.startswith(b"GET"):
                    payload = {"data": [{"id": MODEL, "owned_by": owner}]}
                else:
                    prompts = body["prompt"] if isinstance(body["prompt"], list) else [0]
                    count = len(prompts) * body.get("n", 1)
                    payload = {"choices": [{"index": i, "text": ANSWER} for i in range(count)]}
                data = json.dumps(payload).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(data), data)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


class InstantServer:
    """`serve` in a subprocess, for the block's length."""

    def __init__(self, owner: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.owner = owner

    def __enter__(self) -> "InstantServer":
        command = [sys.executable, __file__, "--serve", str(self.port), "--owner", self.owner]
        self.process = subprocess.Popen(command)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.url}/models", timeout=1).raise_for_status()
                return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.process.kill()
        self.process.wait()
        raise RuntimeError("The benchmark's server did not start within 30 s.")

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# --- the clients -----------------------------------------------------------------------


def prompts_of(count: int) -> list[str]:
    """Few-shot rewrite prompts of about the app's length (~1,300 characters)."""
    shots = "".join(
        f"Sentence: The {w} was fine, and the service was quick. [negation] The {w} was not "
        "fine, and the service was slow.\n"
        for w in ("soup", "movie", "hotel", "plot", "book", "room", "car", "cast")
    )
    ask = "Sentence: Review number {} says it was great. [negation]"
    return [shots + ask.format(i) for i in range(count)]


def ours(url: str, prompts: list[str], concurrency: int) -> float:
    """Seconds for the engine to take in SAMPLES continuations of every prompt."""
    from generation.decoding import DecodingConfig
    from generation.engines import ServerConfig
    from generation.engines.server import ServerEngine

    engine = ServerEngine(
        ServerConfig(base_url=url, model=MODEL, api="completions", concurrency=concurrency)
    )
    started = time.perf_counter()
    results = engine.generate(
        prompts, [BUDGET] * len(prompts), DecodingConfig(per_prompt=SAMPLES), stop_at_newline=True
    )
    seconds = time.perf_counter() - started
    assert all(len(texts) == SAMPLES for texts in results)
    return seconds


def _body(prompt: str, index: int) -> dict:
    return {
        "model": MODEL,
        "prompt": prompt,
        "stop": ["\n"],
        "max_tokens": BUDGET,
        "n": SAMPLES,
        "temperature": 1.0,
        "top_p": 0.9,
        "seed": index * SAMPLES,
    }


def httpx_shared(url: str, prompts: list[str], concurrency: int) -> float:
    """Seconds for one prompt a request through one httpx.Client shared by the threads."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(timeout=60, limits=limits) as client:

        def one(index: int) -> int:
            reply = client.post(f"{url}/completions", json=_body(prompts[index], index))
            return len(reply.json()["choices"])

        started = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            counts = list(pool.map(one, range(len(prompts))))
        seconds = time.perf_counter() - started
    assert counts == [SAMPLES] * len(prompts)
    return seconds


def bare_http_client(port: int, prompts: list[str], concurrency: int) -> float:
    """Seconds for one prompt a request over http.client, a connection a thread, no engine."""
    local = threading.local()
    opened: list[http.client.HTTPConnection] = []

    def one(index: int) -> int:
        if not hasattr(local, "connection"):
            local.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            opened.append(local.connection)
        body = json.dumps(_body(prompts[index], index)).encode()
        local.connection.request(
            "POST", "/v1/completions", body, {"Content-Type": "application/json"}
        )
        return len(json.loads(local.connection.getresponse().read())["choices"])

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        counts = list(pool.map(one, range(len(prompts))))
    seconds = time.perf_counter() - started
    for connection in opened:
        connection.close()
    assert counts == [SAMPLES] * len(prompts)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3,000 prompts instead of 12,000.")
    parser.add_argument("--prompts", type=int, help="How many prompts (overrides --quick).")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=64,
        help="Requests in flight (default 64, the benchmark's setting on a GPU).",
    )
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--owner", default="openai", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.owner)
        return
    count = args.prompts if args.prompts is not None else (3_000 if args.quick else 12_000)
    if count < 1 or args.concurrency < 1:
        parser.error("--prompts and --concurrency must be at least 1")
    prompts = prompts_of(count)
    print(f"{count} prompts, {SAMPLES} continuations each, {args.concurrency} requests in flight")

    seconds: dict[str, float] = {}
    with InstantServer("openai") as server:
        ours(server.url, prompts[:200], args.concurrency)  # warm: imports, first connections
        seconds["ours, one prompt a request"] = ours(server.url, prompts, args.concurrency)
        seconds["httpx shared client (baseline)"] = httpx_shared(
            server.url, prompts, args.concurrency
        )
        seconds["bare http.client"] = bare_http_client(server.port, prompts, args.concurrency)
    with InstantServer("vllm") as server:
        seconds["ours, lists of prompts (vLLM)"] = ours(server.url, prompts, args.concurrency)

    width = max(len(label) for label in seconds)
    for label, spent in seconds.items():
        print(
            f"{label:<{width}}  {spent:6.2f} s  {count / spent:8.0f} prompts/s  "
            f"{count * SAMPLES / spent:8.0f} continuations/s"
        )
    per_s = {label: count * SAMPLES / spent for label, spent in seconds.items()}
    ratio = per_s["ours, one prompt a request"] / per_s["httpx shared client (baseline)"]
    print(
        f"RESULT server_client ratio={ratio:.2f} "
        f"continuations_per_s={per_s['ours, one prompt a request']:.0f} "
        f"listed_continuations_per_s={per_s['ours, lists of prompts (vLLM)']:.0f} "
        f"httpx_continuations_per_s={per_s['httpx shared client (baseline)']:.0f} "
        f"bare_continuations_per_s={per_s['bare http.client']:.0f} prompts={count}"
    )


if __name__ == "__main__":
    main()
