"""A simulated crowdworker that does an assignment through the real HTTP pages.

It joins through the campaign's invitation link, reads the instructions, answers
every round as a browser without JavaScript would (one form POST per round), follows
the training feedback, and stops at the completion page, or earlier when told to
abandon. Used by `bench/labeling.py` and by the concurrency test; it measures the
latency of serving and of submitting each round.
"""

import logging
import random
import re
import time
from dataclasses import dataclass, field
from html import unescape

import httpx

# One line per request would drown the benchmark's own report.
logging.getLogger("httpx").setLevel(logging.WARNING)

_FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
_FORM_ACTION = re.compile(r'<form method="post" action="([^"]+)" id="round-form"')
_ITEM = re.compile(r"data-item\b")
_LABEL_VALUE = re.compile(r'name="label-1" value="([^"]+)"')
_BUTTON_LINK = re.compile(r'<a class="button" href="([^"]+)"')
_CODE = re.compile(r'<output id="completion-code">([^<]+)</output>')


@dataclass
class WorkerResult:
    worker_id: str
    rounds_submitted: int = 0
    completion_code: str = ""
    abandoned: bool = False
    no_work: bool = False
    serve_seconds: list[float] = field(default_factory=list)
    submit_seconds: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class SimulatedWorker:
    def __init__(
        self,
        base_url: str,
        join_path: str,
        worker_id: str,
        *,
        abandon_after: int | None = None,
        seed: int = 0,
        timeout: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.join_path = join_path
        self.result = WorkerResult(worker_id=worker_id)
        self.abandon_after = abandon_after
        self.rng = random.Random(seed)
        self.client = httpx.Client(base_url=self.base_url, timeout=timeout)

    def _check(self, response: httpx.Response, *expected: int) -> httpx.Response:
        if response.status_code not in expected:
            raise RuntimeError(
                f"{response.request.method} {response.request.url.path} answered "
                f"{response.status_code}: {response.text[:200]}"
            )
        return response

    def run(self) -> WorkerResult:
        try:
            self._run()
        except Exception as error:  # reported, not raised: the caller counts them
            self.result.errors.append(f"{type(error).__name__}: {error}")
        finally:
            self.client.close()
        return self.result

    def _run(self) -> None:
        page = self._check(self.client.get(self.join_path), 200)
        csrf = _CSRF.search(page.text).group(1)
        joined = self.client.post(
            self.join_path,
            params={"worker": self.result.worker_id},
            data={"csrfmiddlewaretoken": csrf},
            headers={"Referer": self.base_url + self.join_path},
        )
        if joined.status_code == 409 and "no work left" in joined.text:
            self.result.no_work = True
            return
        url = self._check(joined, 302).headers["location"]
        while url:
            if (
                self.abandon_after is not None
                and self.result.rounds_submitted >= self.abandon_after
            ):
                self.result.abandoned = True
                return
            url = self._step(url)

    def _step(self, url: str) -> str | None:
        started = time.perf_counter()
        response = self._check(self.client.get(url), 200, 302)
        if response.status_code == 302:
            return response.headers["location"]
        text = response.text
        action = _FORM_ACTION.search(text)
        if action is None:  # instructions or training feedback: follow the button
            code = _CODE.search(text)
            if code:
                self.result.completion_code = code.group(1).strip()
                return None
            return unescape(_BUTTON_LINK.search(text).group(1))
        self.result.serve_seconds.append(time.perf_counter() - started)
        data = {"form_token": _FORM_TOKEN.search(text).group(1)}
        labels = _LABEL_VALUE.findall(text)
        for index in range(1, len(_ITEM.findall(text)) + 1):
            data[f"valid-{index}"] = "valid" if self.rng.random() < 0.8 else "invalid"
            data[f"label-{index}"] = self.rng.choice(labels)
        started = time.perf_counter()
        submitted = self._check(self.client.post(unescape(action.group(1)), data=data), 302)
        self.result.submit_seconds.append(time.perf_counter() - started)
        self.result.rounds_submitted += 1
        return submitted.headers["location"]
