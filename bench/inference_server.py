"""A real OpenAI-compatible inference server on loopback: `transformers serve`, pinned to
one local model directory, in a subprocess. The generation benchmark runs through it, and
the server engine's tests do too.
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

# Starting takes a few seconds on 2 cores: imports, then the model (135M parameters).
SERVER_START_SECONDS = 90.0


class ServerDidNotStart(RuntimeError):
    """The server exited or never answered; the message quotes the end of its log."""


def free_port() -> int:
    """A loopback port nothing listens on (free when asked; good enough here)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sampling_model_directory(directory: Path | str, into: Path) -> Path:
    """A view of a model directory whose generation config samples.

    `transformers serve` samples only when the model's own generation config says
    `do_sample`; a request's temperature does not turn it on. The view links every file
    of `directory` into `into` and writes a generation config with `do_sample: true`.
    """
    source = Path(directory)
    into.mkdir(parents=True, exist_ok=True)
    for path in source.iterdir():
        if path.name != "generation_config.json":
            (into / path.name).symlink_to(path.resolve())
    config_path = source / "generation_config.json"
    config = json.loads(config_path.read_text()) if config_path.is_file() else {}
    (into / "generation_config.json").write_text(json.dumps({**config, "do_sample": True}))
    return into


class TransformersServer:
    """`transformers serve` pinned to one local model directory, on loopback.

    `model` is the name requests must give (the directory, as the server was told);
    `stop()` ends the process. Its log is kept in `log` and quoted when it fails to
    start. On CPU it runs one thread (beside other processes on few cores, OpenMP's
    threads wait on each other and decoding gets ten times slower); with
    `continuous_batching` it serves concurrent requests in one batch, as on a GPU.
    """

    def __init__(
        self,
        model_directory: Path | str,
        log: Path,
        *,
        device: str = "cpu",
        continuous_batching: bool = False,
    ) -> None:
        self.model = str(model_directory)
        self.log = log
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/v1"
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",  # the model is a local directory: never ask the hub
            "HF_HUB_DISABLE_UPDATE_CHECK": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        if device == "cpu":
            env["OMP_NUM_THREADS"] = "1"
        command = [
            sys.executable,
            "-m",
            "transformers.cli.transformers",
            "serve",
            self.model,  # --force-model: preloaded, the only model served
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--device",
            device,
        ]
        if continuous_batching:
            command.append("--continuous-batching")
        with log.open("wb") as output:
            self.process = subprocess.Popen(
                command, stdout=output, stderr=subprocess.STDOUT, env=env
            )

    def wait_ready(self, seconds: float = SERVER_START_SECONDS) -> None:
        """Return once GET /models answers; raise ServerDidNotStart, quoting the log."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerDidNotStart(
                    f"transformers serve exited with {self.process.returncode}:\n{self.tail()}"
                )
            try:
                if httpx.get(f"{self.url}/models", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise ServerDidNotStart(
            f"transformers serve did not answer within {seconds:g} s:\n{self.tail()}"
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])
