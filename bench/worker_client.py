"""A simulated crowdworker that does an assignment through the real HTTP pages.

It joins through the campaign's invitation link, reads the instructions, answers
every round as a browser without JavaScript would (one form POST per round, answered
with a redirect to the next page), follows the training feedback, and stops at the
completion page, or earlier when told to abandon. With `htmx` it works as the page's
htmx does: it saves every counterfactual on each click, and submits with htmx, whose
answer is the next round itself (or the address of the feedback or completion page to
load); with `think_seconds` it pauses before each decision as a person would (each
counterfactual's answers, then the submit: four per round; each pause drawn uniformly
from half to one and a half times the mean, never timed), and `arrive_after` delays
its first request, so that a crowd arrives over time instead of all at once; with
`retry_seconds` it retries a request that failed in transit or with a 5xx (a
restarted server, a dropped database connection) as a patient browser would. Used by
`bench/labeling.py`, `bench/load.py`, the concurrency and reliability tests; it
measures the latency of serving, saving and submitting, and keeps every acknowledged
submit (its URL and answers) so the database can be checked against them.
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
_ITEM_SAVE = re.compile(r'hx-post="([^"]+/items/\d+/)"')
RETRY_STATUSES = {500, 502, 503, 504}


@dataclass
class WorkerResult:
    worker_id: str
    rounds_submitted: int = 0
    completion_code: str = ""
    abandoned: bool = False
    no_work: bool = False
    serve_seconds: list[float] = field(default_factory=list)
    submit_seconds: list[float] = field(default_factory=list)
    save_seconds: list[float] = field(default_factory=list)
    # (submit path, form data) of every submit the server acknowledged
    acknowledged: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    retries: int = 0
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
        htmx: bool = False,
        retry_seconds: float = 0.0,
        think_seconds: float = 0.0,
        arrive_after: float = 0.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.join_path = join_path
        self.result = WorkerResult(worker_id=worker_id)
        self.abandon_after = abandon_after
        self.rng = random.Random(seed)
        self.htmx = htmx
        self.retry_seconds = retry_seconds
        self.think_seconds = think_seconds
        self.arrive_after = arrive_after
        self.client = httpx.Client(base_url=self.base_url, timeout=timeout)

    def _check(self, response: httpx.Response, *expected: int) -> httpx.Response:
        if response.status_code not in expected:
            raise RuntimeError(
                f"{response.request.method} {response.request.url.path} answered "
                f"{response.status_code}: {response.text[:200]}"
            )
        return response

    def _send(self, method: str, url: str, **kwargs) -> httpx.Response:
        """One request; with `retry_seconds`, retried while it fails in transit or with 5xx.

        Every request the worker makes may safely be sent twice: the server answers a
        replayed save or submit as it answered the first.
        """
        give_up_at = time.monotonic() + self.retry_seconds
        pause = 0.05
        while True:
            try:
                response = self.client.request(method, url, **kwargs)
            except httpx.TransportError:
                if time.monotonic() > give_up_at:
                    raise
            else:
                if response.status_code not in RETRY_STATUSES or time.monotonic() > give_up_at:
                    return response
            self.result.retries += 1
            time.sleep(pause)
            pause = min(pause * 2, 1.0)

    def _think(self) -> None:
        if self.think_seconds > 0:
            time.sleep(self.think_seconds * self.rng.uniform(0.5, 1.5))

    def run(self) -> WorkerResult:
        try:
            self._run()
        except Exception as error:  # reported, not raised: the caller counts them
            self.result.errors.append(f"{type(error).__name__}: {error}")
        finally:
            self.client.close()
        return self.result

    def _run(self) -> None:
        time.sleep(self.arrive_after)
        page = self._check(self._send("GET", self.join_path), 200)
        csrf = _CSRF.search(page.text).group(1)
        joined = self._send(
            "POST",
            self.join_path,
            params={"worker": self.result.worker_id},
            data={"csrfmiddlewaretoken": csrf},
            headers={"Referer": self.base_url + self.join_path},
        )
        if joined.status_code == 409 and "no work left" in joined.text:
            self.result.no_work = True
            return
        step: str | httpx.Response | None = self._check(joined, 302).headers["location"]
        while step is not None:
            if (
                self.abandon_after is not None
                and self.result.rounds_submitted >= self.abandon_after
            ):
                self.result.abandoned = True
                return
            step = self._step(step)

    def _step(self, step: str | httpx.Response) -> str | httpx.Response | None:
        """One page, given by its address or by the answer that holds it already (an htmx
        submit's next round); returns the next step, None at the completion page."""
        started = time.perf_counter()
        if isinstance(step, str):
            response = self._check(self._send("GET", step), 200, 302)
            if response.status_code == 302:
                return response.headers["location"]
        else:
            response = step
        text = response.text
        action = _FORM_ACTION.search(text)
        if action is None:  # instructions or training feedback: follow the button
            code = _CODE.search(text)
            if code:
                self.result.completion_code = code.group(1).strip()
                return None
            return unescape(_BUTTON_LINK.search(text).group(1))
        if isinstance(step, str):  # a swapped-in round was timed with its submit
            self.result.serve_seconds.append(time.perf_counter() - started)
        form_token = _FORM_TOKEN.search(text).group(1)
        data = {"form_token": form_token}
        labels = _LABEL_VALUE.findall(text)
        for index in range(1, len(_ITEM.findall(text)) + 1):
            data[f"valid-{index}"] = "valid" if self.rng.random() < 0.8 else "invalid"
            data[f"label-{index}"] = self.rng.choice(labels)
        if self.htmx:
            self._save_items(text, data, form_token)
        else:
            for _ in range(len(_ITEM.findall(text))):
                self._think()
        self._think()
        submit_path = unescape(action.group(1))
        started = time.perf_counter()
        if self.htmx:
            headers = {"HX-Request": "true", "X-Worker-Form": form_token}
            submitted = self._check(
                self._send("POST", submit_path, data=data, headers=headers), 200
            )
        else:
            submitted = self._check(self._send("POST", submit_path, data=data), 302)
        self.result.submit_seconds.append(time.perf_counter() - started)
        self.result.rounds_submitted += 1
        self.result.acknowledged.append((submit_path, data))
        if not self.htmx:
            return submitted.headers["location"]
        return submitted.headers.get("HX-Redirect") or submitted

    def _save_items(self, text: str, data: dict[str, str], form_token: str) -> None:
        """Each counterfactual's answers as htmx posts them once both are chosen."""
        for index, path in enumerate(_ITEM_SAVE.findall(text), start=1):
            answers = {key: data[key] for key in (f"valid-{index}", f"label-{index}")}
            self._think()
            started = time.perf_counter()
            self._check(
                self._send(
                    "POST",
                    unescape(path),
                    data=answers,
                    headers={"HX-Request": "true", "X-Worker-Form": form_token},
                ),
                200,
            )
            self.result.save_seconds.append(time.perf_counter() - started)
