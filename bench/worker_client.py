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
`bench/labeling.py`, `bench/load.py`, `bench/crowd_http.py`, the concurrency and
reliability tests; it measures the latency of serving, saving and submitting, and keeps
every acknowledged submit (its URL and answers) so the database can be checked against
them.

Without options it answers at random. A crowd simulation gives it an `answer` policy
(what it reads, the reference and each counterfactual as the page shows them, to its
answers), a `round_seconds` pace (each round's time, spread over its decisions), and
`repeat`: it then takes assignment after assignment, as crowdworkers take HIT after
HIT, until the join link answers that there is no work left or refuses it, or until
`stop` is set.
"""

import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
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
_REFERENCE = re.compile(r'<span class="reference-text">(.*?)</span>', re.DOTALL)
_ITEM_TEXT = re.compile(r'<p class="cf-text">(.*?)</p>', re.DOTALL)
_REMOVED = re.compile(r"<del>.*?</del>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_PAGE_MESSAGE = re.compile(r"<main\b[^>]*>(.*?)</main>", re.DOTALL)
_WORKER_COOKIE = "cfannotate_worker_"  # the join link's signed cookie, per campaign
RETRY_STATUSES = {500, 502, 503, 504}

# (reference text, counterfactual text as shown, label values) -> (is_valid, label value)
AnswerPolicy = Callable[[str, str, Sequence[str]], tuple[bool, str]]


def shown_text(fragment: str) -> str:
    """The text of a marked-up fragment as a reader sees it: struck-through words left out,
    tags dropped, entities decoded, whitespace collapsed."""
    return " ".join(unescape(_TAG.sub(" ", _REMOVED.sub(" ", fragment))).split())


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
    assignments: int = 0  # assignments started (with `repeat`, possibly many)
    refused: str = ""  # with `repeat`: why the join link refused more work, other than none left
    stopped: bool = False  # `stop` was set before the worker ran out of work
    # The id the server gave this worker (its signed join cookie), when it is not worker_id:
    # an invitation link names its workers itself.
    server_worker_id: str = ""


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
        answer: AnswerPolicy | None = None,
        round_seconds: Callable[[random.Random], float] | None = None,
        repeat: bool = False,
        stop: threading.Event | None = None,
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
        self.answer = answer
        self.round_seconds = round_seconds
        self.repeat = repeat
        self.stop = stop
        self._pause: float | None = None  # this round's pause per decision, when paced
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
        if self._pause is not None:
            time.sleep(self._pause)
        elif self.think_seconds > 0:
            time.sleep(self.think_seconds * self.rng.uniform(0.5, 1.5))

    def _stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()

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
        while not self._stopping():
            if not self._assignment() or not self.repeat:
                return
        self.result.stopped = True

    def _assignment(self) -> bool:
        """Join and do one assignment; False when the worker stops (no work, refused,
        abandoned, or told to stop)."""
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
            return False
        if self.repeat and 400 <= joined.status_code < 500:
            found = _PAGE_MESSAGE.search(joined.text)
            message = shown_text(found.group(1) if found else joined.text)[:200]
            self.result.refused = f"{joined.status_code}: {message}"
            return False
        step: str | httpx.Response | None = self._check(joined, 302).headers["location"]
        self.result.assignments += 1
        self._remember_server_id()
        while step is not None:
            if (
                self.abandon_after is not None
                and self.result.rounds_submitted >= self.abandon_after
            ):
                self.result.abandoned = True
                return False
            if self._stopping():
                self.result.stopped = True
                return False
            step = self._step(step)
        return True

    def _remember_server_id(self) -> None:
        """The worker id in the join link's cookie (Django signs `value:timestamp:signature`)."""
        for cookie in self.client.cookies.jar:
            if cookie.name.startswith(_WORKER_COOKIE) and cookie.value:
                self.result.server_worker_id = cookie.value.strip('"').rsplit(":", 2)[0]

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
        items = len(_ITEM.findall(text))
        if self.round_seconds is not None:  # the round's time over its decisions and submit
            self._pause = max(0.0, self.round_seconds(self.rng)) / (items + 1)
        if self.answer is None:
            for index in range(1, items + 1):
                data[f"valid-{index}"] = "valid" if self.rng.random() < 0.8 else "invalid"
                data[f"label-{index}"] = self.rng.choice(labels)
        else:
            found = _REFERENCE.search(text)
            reference = shown_text(found.group(1)) if found else ""
            for index, fragment in enumerate(_ITEM_TEXT.findall(text)[:items], start=1):
                is_valid, label = self.answer(reference, shown_text(fragment), labels)
                data[f"valid-{index}"] = "valid" if is_valid else "invalid"
                data[f"label-{index}"] = label
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
