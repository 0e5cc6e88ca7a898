"""Crowd benchmark over HTTP: does quality control keep true labels from a crowd with spammers?

A live server (gunicorn, with `manage.py db_worker` on the `default` queue running
quality control in the background, as in production) on a fresh database: PostgreSQL
when `DATABASE_URL` points at it or `--database-url` is given (a temporary database,
created and dropped), else SQLite in a temporary state directory. Everything a
researcher or a worker does goes over HTTP:

1. The researcher (an account made with `createsuperuser` before the run: set-up)
   logs in, creates an API token on the token page, creates an NLI campaign through the
   REST API (K = 3, 2 hidden gold rounds and 1 training round per assignment), uploads
   originals from the CAD NLI data (`../shared/data/cad/NLI_original`), authors gold
   and training rounds from held-out pairs whose answers are known, imports the
   human-written revised hypotheses (`NLI_revised_hypothesis`) as candidates, waits
   for the background selection to put them into units, and opens labeling on the
   campaign page (there is no API for that), which shows the invitation link.
2. A crowd of simulated workers (`bench/worker_client.py`, htmx as the page does it)
   joins through that link, two thirds careful (the revised hypothesis's label 85 % of
   the time, 8-20 s a round) and one third spammers (random answers, 2 s a round), and
   takes assignment after assignment until the link says there is no work left or
   refuses them. `--time-scale` multiplies both the pacing and the campaign's
   `min_median_seconds` (18 s), so the time rule keeps its meaning in a shorter run.
3. Nobody ever asks for a quality refresh (`manual_steps` counts any request to it).
   When every worker has stopped, or at the wall-clock cap (a stall), the results are
   read through the API: the raw judgments export (who judged what, which label was
   kept), the candidate list and the quality report.

    python bench/crowd_http.py --quick    # 60 originals, 9 workers, time scale 0.1 (~4 min)
    python bench/crowd_http.py            # 400 originals, 12 workers, real time (hours)

The last line reads
`RESULT crowd_http coverage=... kept_accuracy=... spammer_share=... manual_steps=0`:
coverage is the share of imported candidates with a kept label, kept_accuracy the share
of kept labels equal to the data's label, spammer_share the spammers' share of all
judgments in real rounds. Goals: coverage >= 0.90, kept_accuracy >= 0.95,
spammer_share <= 0.15, manual_steps = 0.
"""

import argparse
import csv
import io
import json
import os
import random
import re
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from bench.labeling import (  # noqa: E402 (needs the path above)
    _free_port,
    fresh_database,
    migrate_in,
)
from bench.load import (  # noqa: E402
    drop_database,
    start_server,
    start_task_worker,
    tasks_wait,
)
from bench.worker_client import SimulatedWorker, WorkerResult  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cad"
SPLITS = ("dev", "train")  # dev first; train only when more pairs are asked for than dev has
MIN_MEDIAN_SECONDS = 18.0  # C.2's time rule, before scaling
REFRESH_PATH = re.compile(r"/quality/refresh/?$")

_CSRF = re.compile(r'"X-CSRFToken": "([^"]+)"|name="csrfmiddlewaretoken" value="([^"]+)"')
_TOKEN_KEY = re.compile(r'id="api-token-key"[^>]*value="([^"]+)"')
_INVITATION = re.compile(r'value="([^"]+)" aria-label="Invitation link"')
_UNIT_JUDGMENTS = re.compile(r"(\d+) of (\d+) unit judgments")
_UNITS_DONE = re.compile(r"(\d+) of (\d+) units complete")


def _fail(message: str) -> None:
    print(f"crowd_http benchmark: {message}", file=sys.stderr)
    sys.exit(2)


def _note(message: str) -> None:
    print(f"[crowd_http {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Config:
    originals: int  # labeled originals; each brings its two revised hypotheses
    gold_rounds: int  # held-out originals turned into hidden gold rounds
    careful: int
    spammers: int
    rounds: int = 6  # real rounds per assignment
    gold_per_assignment: int = 2
    training_rounds: int = 1
    k: int = 3
    time_scale: float = 1.0
    cap_seconds: float = 6 * 3600.0  # the crowd's wall-clock cap; hitting it is a stall
    arrival_seconds: float = 5.0  # workers arrive spread over this long
    careful_accuracy: float = 0.85
    careful_seconds: tuple[float, float] = (8.0, 20.0)  # a round, before scaling
    spammer_seconds: float = 2.0
    # The researcher's time rule, before scaling. C.2's 18 s fits the paper's crowd; this
    # crowd's careful workers take 8-20 s (median 14 s), so its researcher, told by the
    # quality page that careful workers fall to the time rule alone, sets 7 s.
    min_median_seconds: float = 7.0


PRESETS = {
    "full": Config(originals=400, gold_rounds=15, careful=8, spammers=4),
    "quick": Config(
        originals=60, gold_rounds=8, careful=6, spammers=3, time_scale=0.1, cap_seconds=150
    ),
    # For the harness test: a few seconds of labeling, no claim about the goals.
    "tiny": Config(
        originals=12,
        gold_rounds=4,
        careful=3,
        spammers=1,
        rounds=4,
        time_scale=0.02,
        cap_seconds=40,
        arrival_seconds=1.0,
    ),
}


# --------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class Pair:
    """One CAD NLI original and its human-written revised hypotheses with their labels."""

    id: str
    premise: str
    hypothesis: str
    label: str
    revised: tuple[tuple[str, str], ...]  # (hypothesis, label)


def _tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def read_pairs(count: int) -> list[Pair]:
    """The first `count` originals of the CAD NLI data with their revised hypotheses.

    The revised file holds two rows per original, in the original file's order (checked
    here by the premise); a revision identical to its original is left out.
    """
    pairs: list[Pair] = []
    for split in SPLITS:
        originals = _tsv(DATA / "NLI_original" / f"{split}.tsv")
        revised = _tsv(DATA / "NLI_revised_hypothesis" / f"{split}.tsv")
        if len(revised) != 2 * len(originals):
            _fail(f"{split}: {len(revised)} revised rows for {len(originals)} originals.")
        for number, row in enumerate(originals):
            rows = revised[2 * number : 2 * number + 2]
            if any(other["sentence1"] != row["sentence1"] for other in rows):
                _fail(f"{split} row {number + 2}: the revised rows do not follow the originals.")
            versions = tuple(
                (other["sentence2"].strip(), other["gold_label"])
                for other in rows
                if other["sentence2"].strip() != row["sentence2"].strip()
            )
            pairs.append(
                Pair(
                    id=f"{split}-{number + 1:04d}",
                    premise=row["sentence1"].strip(),
                    hypothesis=row["sentence2"].strip(),
                    label=row["gold_label"],
                    revised=versions,
                )
            )
            if len(pairs) == count:
                return pairs
    _fail(f"the CAD NLI data has {len(pairs)} originals, fewer than the {count} asked for.")


def _key(text: str) -> str:
    # The page marks words up and spaces punctuation its own way: compare without spacing.
    return "".join(text.split()).lower()


def truth_of(pairs: list[Pair]) -> dict[tuple[str, str], str]:
    """The data's label of every revised hypothesis, by (reference hypothesis, revision)."""
    return {
        (_key(pair.hypothesis), _key(text)): label for pair in pairs for text, label in pair.revised
    }


# --------------------------------------------------------------------------- the crowd


@dataclass
class Policy:
    """How one simulated worker answers: careful ones from the truth, spammers at random."""

    truth: dict[tuple[str, str], str]
    spammer: bool
    accuracy: float
    rng: random.Random
    unknown: int = 0  # counterfactuals shown whose truth the policy could not find

    def __call__(self, reference: str, shown: str, labels) -> tuple[bool, str]:
        labels = list(labels)
        if self.spammer:
            return self.rng.random() < 0.5, self.rng.choice(labels)
        label = self.truth.get((_key(reference), _key(shown)))
        if label is None:
            self.unknown += 1
            return True, self.rng.choice(labels)
        if self.rng.random() < self.accuracy:
            return True, label
        return True, self.rng.choice([other for other in labels if other != label])


@dataclass
class Member:
    """A worker of the simulated crowd, as the benchmark knows it (the server does not)."""

    worker_id: str
    spammer: bool
    policy: Policy
    simulated: SimulatedWorker
    ended_at: float | None = None

    @property
    def kind(self) -> str:
        return "spammer" if self.spammer else "careful"

    @property
    def server_id(self) -> str:
        """The id the server knows the worker by: the join link names anonymous workers."""
        return self.simulated.result.server_worker_id or self.worker_id


def _pace(config: Config, spammer: bool):
    """A round's seconds: a spammer's fixed pace, a careful worker's uniform range, scaled."""
    low, high = config.careful_seconds

    def seconds(rng: random.Random) -> float:
        if spammer:
            return config.spammer_seconds * config.time_scale
        return rng.uniform(low, high) * config.time_scale

    return seconds


def crowd_build(config: Config, base_url: str, join_path: str, truth, stop, seed: int):
    """The crowd in random order under neutral ids (w01, w02, ...): the ids say nothing."""
    rng = random.Random(seed)
    kinds = [True] * config.spammers + [False] * config.careful
    rng.shuffle(kinds)
    members = []
    for number, spammer in enumerate(kinds, start=1):
        policy = Policy(
            truth, spammer, config.careful_accuracy, random.Random(seed * 1000 + number)
        )
        worker_id = f"w{number:02d}"
        simulated = SimulatedWorker(
            base_url,
            join_path,
            worker_id,
            seed=seed * 1000 + number,
            timeout=120.0,
            htmx=True,
            retry_seconds=30.0,
            arrive_after=rng.uniform(0, config.arrival_seconds),
            answer=policy,
            round_seconds=_pace(config, spammer),
            repeat=True,
            stop=stop,
        )
        members.append(Member(worker_id, spammer, policy, simulated))
    return members


def _judgments(result: WorkerResult) -> int:
    # Each acknowledged submit sends a form token and two fields per counterfactual.
    return sum((len(data) - 1) // 2 for _, data in result.acknowledged)


def crowd_run(members: list[Member], config: Config, progress_every: float) -> tuple[float, bool]:
    """Run the crowd until every worker has stopped or the cap; returns (seconds, cap hit)."""
    stop = members[0].simulated.stop
    started = time.monotonic()
    cap_hit = False

    def run(member: Member) -> WorkerResult:
        try:
            return member.simulated.run()
        finally:
            member.ended_at = time.monotonic() - started

    with ThreadPoolExecutor(max_workers=len(members)) as pool:
        futures = [pool.submit(run, member) for member in members]
        while True:
            _, pending = wait(futures, timeout=progress_every)
            elapsed = time.monotonic() - started
            judged = sum(_judgments(member.simulated.result) for member in members)
            assignments = sum(member.simulated.result.assignments for member in members)
            _note(
                f"{elapsed:6.1f} s: {judged} judgments submitted (real, gold and training), "
                f"{assignments} assignments, {len(pending)} of {len(members)} workers active"
            )
            if not pending:
                break
            if elapsed > config.cap_seconds and not stop.is_set():
                cap_hit = True
                _note(f"the cap of {config.cap_seconds:g} s is hit: telling the workers to stop")
                stop.set()
    return time.monotonic() - started, cap_hit


# --------------------------------------------------------------------------- the researcher


class Researcher:
    """The researcher's browser session and API client; counts quality refreshes asked for."""

    def __init__(self, base_url: str) -> None:
        import httpx

        self.base_url = base_url
        self.browser = httpx.Client(base_url=base_url, timeout=300.0)
        self.api: httpx.Client | None = None
        self.manual_steps = 0

    def close(self) -> None:
        self.browser.close()
        if self.api is not None:
            self.api.close()

    def _count(self, path: str) -> None:
        if REFRESH_PATH.search(path):
            self.manual_steps += 1

    def _csrf(self, path: str) -> str:
        page = self.browser.get(path)
        page.raise_for_status()
        found = _CSRF.search(page.text)
        if found is None:
            _fail(f"no CSRF token on {path}.")
        return found.group(1) or found.group(2)

    def page_post(self, path: str, data: dict | None = None, *, htmx: bool = False):
        self._count(path)
        headers = {"X-CSRFToken": self._csrf(path if not htmx else "/"), "Referer": self.base_url}
        if htmx:
            headers["HX-Request"] = "true"
        return self.browser.post(path, data=data or {}, headers=headers)

    def login(self, username: str, password: str) -> None:
        answer = self.page_post(
            "/accounts/login/", {"username": username, "password": password, "next": "/"}
        )
        if answer.status_code != 302:
            _fail(f"logging in answered {answer.status_code}.")

    def token_create(self) -> None:
        """The API token, made on the token page as a researcher would."""
        import httpx

        answer = self.page_post("/accounts/api-token/", {"action": "rotate"})
        if answer.status_code not in (200, 302):
            _fail(f"creating the API token answered {answer.status_code}.")
        # The page shows a new key in its answer (or, on older versions, after a redirect).
        found = _TOKEN_KEY.search(answer.text) or _TOKEN_KEY.search(
            self.browser.get("/accounts/api-token/").text
        )
        if found is None:
            _fail("the API token page shows no token.")
        self.api = httpx.Client(
            base_url=self.base_url,
            timeout=300.0,
            headers={"Authorization": f"Token {found.group(1)}"},
        )

    def call(self, method: str, path: str, expected: int = 200, **kwargs):
        self._count(path)
        answer = self.api.request(method, path, **kwargs)
        if answer.status_code != expected:
            _fail(f"{method} {path} answered {answer.status_code}: {answer.text[:500]}")
        return answer

    def pages(self, path: str, **params):
        """Every row of a paginated list."""
        rows, url = [], path
        while url:
            page = self.call("GET", url, params=params if url == path else None).json()
            rows += page["results"]
            url = page["next"]
        return rows

    def count(self, path: str, **params) -> int:
        return self.call("GET", path, params=params).json()["count"]


def campaign_prepare(researcher: Researcher, config: Config, pairs: list[Pair]) -> dict:
    """Campaign, originals, gold and training rounds, candidates, units: all over the API."""
    labeled = pairs[: config.originals]
    gold = pairs[config.originals : config.originals + config.gold_rounds]
    training = pairs[config.originals + config.gold_rounds :]
    campaign = campaign_create(researcher, config)
    base = f"/api/campaigns/{campaign['id']}"
    uploaded, ids = originals_upload(researcher, base, pairs)
    _note(f"campaign {campaign['id']}: {uploaded['imported']} originals uploaded")
    gold_author(researcher, base, ids, gold, training)
    _note(f"{len(gold)} gold and {len(training)} training rounds authored")
    imported = candidates_import(researcher, base, labeled)
    _note(f"{imported['imported']} candidates imported; waiting for the background selection")
    selected = selection_wait(researcher, base, imported["kept"])
    return {
        "id": campaign["id"],
        "originals": uploaded["imported"],
        "imported": imported["imported"],
        "kept_on_import": imported["kept"],
        "selected": selected,
        "join_path": labeling_open(researcher, campaign["id"]),
    }


def campaign_create(researcher: Researcher, config: Config) -> dict:
    """The NLI campaign with the run's settings (the time rule scaled): its API record."""
    settings = {
        "judgments_per_candidate": config.k,
        "rounds_per_assignment": config.rounds,
        "gold_rounds_per_assignment": config.gold_per_assignment,
        "training_rounds": config.training_rounds,
        "min_median_seconds": round(config.min_median_seconds * config.time_scale, 3),
    }
    return researcher.call(
        "POST",
        "/api/campaigns/create/",
        201,
        json={"name": "Crowd over HTTP (CAD NLI)", "task_type": "nli", "settings": settings},
    ).json()


def originals_upload(researcher: Researcher, base: str, pairs: list[Pair]) -> tuple[dict, dict]:
    """Every pair's premise and hypothesis as a TSV upload: (the upload's answer, original
    ids by pair id)."""
    table = io.StringIO()
    writer = csv.writer(table, delimiter="\t", lineterminator="\n")
    writer.writerow(["pair_id", "sentence1", "sentence2", "gold_label"])
    writer.writerows([pair.id, pair.premise, pair.hypothesis, pair.label] for pair in pairs)
    mapping = {"id": "pair_id", "text": "sentence2", "context": "sentence1", "label": "gold_label"}
    uploaded = researcher.call(
        "POST",
        f"{base}/originals/upload/",
        201,
        files={"file": ("originals.tsv", table.getvalue().encode(), "text/tab-separated-values")},
        data={"mapping": json.dumps(mapping)},
    ).json()
    ids = {row["external_id"]: row["id"] for row in researcher.pages(f"{base}/originals/")}
    return uploaded, ids


def gold_author(
    researcher: Researcher, base: str, ids: dict, gold: list[Pair], training: list[Pair]
) -> None:
    """A gold (or training) round per held-out pair, its revised hypotheses as the items."""
    for kind, group in (("gold", gold), ("training", training)):
        for pair in group:
            items = [
                {
                    "text": text,
                    "valid": True,
                    "label": label,
                    "explanation": "The label of the revised hypothesis in the CAD data.",
                }
                for text, label in pair.revised
            ]
            gold_round = {"original": ids[pair.id], "kind": kind, "items": items}
            researcher.call("POST", f"{base}/gold/", 201, json=gold_round)


def candidates_import(researcher: Researcher, base: str, labeled: list[Pair]) -> dict:
    """The labeled pairs' revised hypotheses as a candidate CSV import, followed until the
    background task has stored them (or 300 s): the finished import."""
    table = io.StringIO()
    writer = csv.writer(table, lineterminator="\n")
    writer.writerow(["original_id", "text"])
    writer.writerows([pair.id, text] for pair in labeled for text, _ in pair.revised)
    queued = researcher.call(
        "POST",
        f"{base}/candidates/import/",
        202,
        files={"file": ("candidates.csv", table.getvalue().encode(), "text/csv")},
    ).json()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        job = researcher.call("GET", queued["url"]).json()
        if job["state"] == "done":
            return job
        if job["state"] in ("failed", "cancelled"):
            _fail(f"the candidate import {job['state']}: {job['error']} {job['fields']}")
        time.sleep(0.5)
    _fail("the candidate import was not done within 300 s.")


def selection_wait(researcher: Researcher, base: str, kept: int) -> int:
    """Candidates selected into units, once all `kept` are (or after 180 s, at least one)."""
    # Selection into units runs in the task worker, as after a generation run.
    deadline = time.monotonic() + 180
    selected = 0
    while time.monotonic() < deadline:
        selected = researcher.count(f"{base}/candidates/", status="selected")
        if selected >= kept:
            break
        time.sleep(1.0)
    if not selected:
        _fail("the background selection put no candidate into a unit within 180 s.")
    return selected


def labeling_open(researcher: Researcher, campaign_id: int) -> str:
    """Labeling opened on the campaign page (no API for that): the invitation's join path."""
    opened = researcher.page_post(f"/campaigns/{campaign_id}/labeling/open/", htmx=True)
    found = _INVITATION.search(opened.text)
    if opened.status_code != 200 or found is None:
        _fail(f"opening labeling answered {opened.status_code}: {opened.text[:300]}")
    return urlsplit(unescape(found.group(1))).path


# --------------------------------------------------------------------------- measuring


@dataclass
class Figures:
    candidates: int = 0  # imported (no gold)
    kept: int = 0
    kept_right: int = 0
    judgments: int = 0  # real rounds
    spammer_judgments: int = 0
    candidates_judged: int = 0
    contrast_rows: int = 0
    per_kind: Counter = field(default_factory=Counter)

    @property
    def coverage(self) -> float:
        return self.kept / self.candidates if self.candidates else 0.0

    @property
    def kept_accuracy(self) -> float:
        return self.kept_right / self.kept if self.kept else 0.0

    @property
    def spammer_share(self) -> float:
        return self.spammer_judgments / self.judgments if self.judgments else 0.0


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _standing(worker: dict) -> str:
    if worker["qualified"]:
        return "kept   "
    return "on hold" if worker["held_until"] is not None else "removed"


def figures_read(researcher: Researcher, campaign_id: int, truth, spammers: set[str]) -> Figures:
    """The figures from the raw judgments export and the candidate list, over the API."""
    base = f"/api/campaigns/{campaign_id}"
    rows = _jsonl(researcher.call("GET", f"{base}/exports/judgments/?format=jsonl").text)
    figures = Figures(candidates=researcher.count(f"{base}/candidates/", source="imported"))
    kept: dict[int, bool] = {}
    judged = set()
    for row in rows:
        if row["round_kind"] != "real":
            continue
        figures.judgments += 1
        spammer = row["worker_id"] in spammers
        figures.spammer_judgments += spammer
        figures.per_kind["spammer" if spammer else "careful"] += 1
        judged.add(row["candidate_id"])
        if row["kept"]:
            kept[row["candidate_id"]] = row["kept_label"] == truth.get(
                (_key(row["original_text"]), _key(row["text"]))
            )
    figures.candidates_judged = len(judged)
    figures.kept = len(kept)
    figures.kept_right = sum(kept.values())
    contrast = researcher.call("GET", f"{base}/exports/contrast/?format=jsonl").text
    figures.contrast_rows = len(_jsonl(contrast))
    return figures


# --------------------------------------------------------------------------- set-up


def database_prepare(url: str | None, state_dir: str, sweep_scale: float) -> dict[str, str]:
    """A fresh migrated database, Django set up on it here; the servers' environment.

    The servers share this state directory (its generated secret key, and the SQLite
    file when there is no PostgreSQL: no DATABASE_URL, so that the settings give SQLite
    their WAL and busy-timeout options) and nothing else of ours.
    """
    if url:
        fresh_database(url)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("CFANNOTATE_") and key != "DATABASE_URL"
    }
    env.update(
        {
            "CFANNOTATE_STATE_DIR": state_dir,
            "CFANNOTATE_DEBUG": "0",
            "CFANNOTATE_LOG_LEVEL": "ERROR",
            # The quality sweep's period, scaled like the rest of the clock.
            "CFANNOTATE_QUALITY_SWEEP_SECONDS": str(max(5, round(120 * sweep_scale))),
            **({"DATABASE_URL": url} if url else {}),
        }
    )
    migrate_in(env)
    os.environ.pop("DATABASE_URL", None)
    os.environ["CFANNOTATE_QUALITY_SWEEP_SECONDS"] = env["CFANNOTATE_QUALITY_SWEEP_SECONDS"]
    if url:
        os.environ["DATABASE_URL"] = url
    for key in ("CFANNOTATE_STATE_DIR", "CFANNOTATE_DEBUG", "CFANNOTATE_LOG_LEVEL"):
        os.environ[key] = env[key]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    import django

    django.setup()
    return env


def researcher_account(env: dict[str, str]) -> tuple[str, str]:
    """A superuser made by `createsuperuser --noinput`: set-up, not a researcher's step."""
    username, password = "researcher", secrets.token_urlsafe(16)
    made = subprocess.run(
        [sys.executable, "manage.py", "createsuperuser", "--noinput"],
        cwd=REPO,
        env={
            **env,
            "DJANGO_SUPERUSER_USERNAME": username,
            "DJANGO_SUPERUSER_PASSWORD": password,
            "DJANGO_SUPERUSER_EMAIL": "researcher@example.org",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode:
        _fail("createsuperuser failed: " + (made.stderr.strip().splitlines() or ["?"])[-1])
    return username, password


def scratch_database(args) -> str | None:
    """The PostgreSQL database to create and drop, or None for SQLite."""
    if args.database_url:
        return args.database_url
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        return None
    return f"{url.rsplit('/', 1)[0]}/cfannotate_crowd_http_{os.getpid()}"


def _stop(process: subprocess.Popen | None, *, group: bool) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        if group:
            os.killpg(process.pid, signal.SIGTERM)
        else:
            process.terminate()
        process.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        if group:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
        process.wait(timeout=10)


# --------------------------------------------------------------------------- main


def arguments() -> tuple[argparse.Namespace, Config]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="60 originals, 9 workers (~4 min).")
    size.add_argument("--tiny", action="store_true", help="12 originals, 3 workers (the test).")
    parser.add_argument("--originals", type=int, help="Labeled originals (2 candidates each).")
    parser.add_argument("--gold-rounds", type=int, help="Hidden gold rounds to author.")
    parser.add_argument("--careful", type=int, help="Careful workers.")
    parser.add_argument("--spammers", type=int, help="Spammers.")
    parser.add_argument("--rounds", type=int, help="Real rounds per assignment.")
    parser.add_argument(
        "--time-scale",
        type=float,
        help="Multiplies the workers' pacing and min_median_seconds (1 = real time).",
    )
    parser.add_argument(
        "--careful-seconds",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="A careful worker's seconds a round, drawn uniformly, before scaling (8 20).",
    )
    parser.add_argument(
        "--min-median-seconds",
        type=float,
        help="The campaign's time rule before scaling (7; C.2's is 18).",
    )
    parser.add_argument("--cap", type=float, help="Wall-clock cap of the crowd, seconds.")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--progress-every", type=float, default=5.0, help="Seconds.")
    parser.add_argument("--processes", type=int, default=2, help="gunicorn worker processes.")
    parser.add_argument("--threads", type=int, default=8, help="Threads per process.")
    parser.add_argument(
        "--database-url",
        help="A scratch PostgreSQL database (dropped and created); default: a temporary one "
        "beside DATABASE_URL when that is PostgreSQL, else SQLite in a temporary directory.",
    )
    parser.add_argument("--keep-database", action="store_true")
    args = parser.parse_args()
    config = PRESETS["quick" if args.quick else "tiny" if args.tiny else "full"]
    overrides = {
        "originals": args.originals,
        "gold_rounds": args.gold_rounds,
        "careful": args.careful,
        "spammers": args.spammers,
        "rounds": args.rounds,
        "time_scale": args.time_scale,
        "cap_seconds": args.cap,
        "careful_seconds": tuple(args.careful_seconds) if args.careful_seconds else None,
        "min_median_seconds": args.min_median_seconds,
    }
    config = replace(
        config, **{key: value for key, value in overrides.items() if value is not None}
    )
    if config.originals < 1 or config.careful + config.spammers < 1 or config.rounds < 1:
        _fail("--originals, --rounds and the crowd must be at least 1.")
    if not 0 < config.time_scale <= 10:
        _fail("--time-scale must be above 0 and at most 10.")
    return args, config


@dataclass
class Outcome:
    """What a run did and what the server said about it afterwards."""

    campaign: dict
    members: list
    figures: "Figures"
    report: dict  # the quality API's report
    block: str  # the labeling block of the campaign page
    queue: dict[str, int]  # task rows by status after the crowd
    crowd_seconds: float
    cap_hit: bool
    wall: float
    log_name: str
    manual_steps: int


def print_setup(config: Config, args, outcome: Outcome, pairs, *, postgres: bool) -> None:
    """The data, the campaign and the crowd, in two lines."""
    campaign = outcome.campaign
    scale = config.time_scale
    low, high = config.careful_seconds
    splits = Counter(pair.id.split("-")[0] for pair in pairs)
    print(
        f"CAD NLI ({', '.join(f'{split} {n}' for split, n in splits.items())}): "
        f"{campaign['originals']} originals uploaded ({config.originals} labeled, "
        f"{config.gold_rounds} gold, {config.training_rounds} training), "
        f"{campaign['imported']} revised hypotheses imported as candidates "
        f"({campaign['kept_on_import']} kept on import, {campaign['selected']} in units); "
        f"K={config.k}, {config.rounds} real + {config.gold_per_assignment} gold + "
        f"{config.training_rounds} training rounds per assignment; "
        f"{'PostgreSQL' if postgres else 'SQLite'}, gunicorn {args.processes}x{args.threads}, "
        "db_worker on the default queue"
    )
    print(
        f"crowd: {len(outcome.members)} workers ({config.careful} careful: right "
        f"{config.careful_accuracy:.0%}, {low * scale:g}-{high * scale:g} s a round; "
        f"{config.spammers} spammers: random, {config.spammer_seconds * scale:g} s a round); "
        f"time scale {scale:g}, min_median_seconds {config.min_median_seconds * scale:g} "
        f"(C.2: {MIN_MEDIAN_SECONDS:g} s before scaling)"
    )


def print_crowd(config: Config, outcome: Outcome) -> list[str]:
    """A line per worker, then how far labeling got and the judgments; returns errors."""
    results = [member.simulated.result for member in outcome.members]
    errors = [f"{r.worker_id}: {error}" for r in results for error in r.errors]
    figures = outcome.figures
    unit_judgments = _UNIT_JUDGMENTS.search(outcome.block)
    units_done = _UNITS_DONE.search(outcome.block)
    for member in outcome.members:
        result = member.simulated.result
        how = (
            "error"
            if result.errors
            else "stopped at the cap"
            if result.stopped
            else "told no work left"
            if result.no_work
            else f"refused ({result.refused})"
            if result.refused
            else "ended"
        )
        print(
            f"  {member.worker_id} ({member.server_id}) {member.kind:8} "
            f"{result.assignments:3d} assignments "
            f"{result.rounds_submitted:4d} rounds {_judgments(result):5d} judgments, "
            f"{how} at {member.ended_at or 0:.0f} s"
            + (
                f"; {member.policy.unknown} answers without a known truth"
                if member.policy.unknown
                else ""
            )
        )
    print(
        f"labeling: {unit_judgments.group(0) if unit_judgments else '?'}, "
        f"{units_done.group(0) if units_done else '?'}; crowd {outcome.crowd_seconds:.1f} s, "
        f"cap {config.cap_seconds:g} s {'HIT (a stall)' if outcome.cap_hit else 'not hit'}; "
        f"task queue after the crowd {outcome.queue}"
    )
    print(
        f"judgments in real rounds: {figures.judgments} (careful {figures.per_kind['careful']}, "
        f"spammers {figures.per_kind['spammer']}); "
        f"{figures.judgments / max(figures.candidates_judged, 1):.2f} per candidate judged, "
        f"{figures.candidates_judged} of {figures.candidates} candidates judged"
    )
    for error in errors[:5]:
        print(f"  error: {error}")
    return errors


def print_result(config: Config, outcome: Outcome) -> None:
    """The vote, the filters worker by worker, and the RESULT line."""
    figures, report = outcome.figures, outcome.report
    summary = report["summary"]
    kinds = {member.server_id: member.kind for member in outcome.members}
    names = {member.server_id: member.worker_id for member in outcome.members}
    print(
        f"vote: {figures.kept} of {figures.candidates} candidates kept, {figures.kept_right} "
        f"with the data's label; {summary['needs_more']} counterfactuals still need votes, "
        f"{summary['discarded']} discarded, {summary['extra_judgments']} extra judgments "
        f"from re-queues; {figures.contrast_rows} contrast-set rows"
    )
    filtered = [
        worker
        for worker in report["workers"]
        if not worker["qualified"] and worker["held_until"] is None
    ]
    print(
        f"filters: {len(filtered)} of {summary['workers']} workers removed "
        f"({sum(kinds.get(w['worker']) == 'spammer' for w in filtered)} of "
        f"{config.spammers} spammers, "
        f"{sum(kinds.get(w['worker']) == 'careful' for w in filtered)} of {config.careful} "
        f"careful); {summary['on_hold']} on hold for more gold; "
        f"{summary['unsettled']} unsettled"
    )
    for worker in report["workers"]:
        median = worker["median_seconds"]
        print(
            f"  {names.get(worker['worker'], worker['worker'])} "
            f"{kinds.get(worker['worker'], '?'):8} "
            f"{_standing(worker)} median "
            f"{'-' if median is None else f'{median:.2f}'} s, gold {worker['gold_correct']}/"
            f"{worker['gold_total']}"
            + (f": {'; '.join(worker['reasons'])}" if worker["reasons"] else "")
        )
    print(
        f"manual quality refreshes: {outcome.manual_steps}; wall {outcome.wall:.1f} s; "
        f"server log {outcome.log_name}"
    )
    print(
        f"RESULT crowd_http coverage={figures.coverage:.3f} "
        f"kept_accuracy={figures.kept_accuracy:.3f} spammer_share={figures.spammer_share:.3f} "
        f"manual_steps={outcome.manual_steps}"
    )


def main() -> int:
    args, config = arguments()
    started = time.monotonic()
    pairs = read_pairs(config.originals + config.gold_rounds + config.training_rounds)
    truth = truth_of(pairs)
    database = scratch_database(args)
    state = tempfile.TemporaryDirectory(prefix="cfannotate-crowd-http-")
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (kept for the report)
        "w", prefix="cfannotate-crowd-http-", suffix=".log", delete=False
    )
    server = tasks = researcher = None
    try:
        _note(f"database: {'PostgreSQL ' + database.rsplit('/', 1)[-1] if database else 'SQLite'}")
        env = database_prepare(database, state.name, config.time_scale)
        username, password = researcher_account(env)
        port = _free_port()
        base_url = f"http://127.0.0.1:{port}"
        server = start_server(env, port, args.processes, args.threads, keep_alive=2, log=log)
        tasks = start_task_worker(env)
        _note(f"gunicorn and db_worker up after {time.monotonic() - started:.0f} s")

        researcher = Researcher(base_url)
        researcher.login(username, password)
        researcher.token_create()
        campaign = campaign_prepare(researcher, config, pairs)
        _note(
            f"campaign {campaign['id']} open after {time.monotonic() - started:.0f} s: "
            f"{campaign['imported']} candidates imported, {campaign['selected']} in units"
        )

        stop = threading.Event()
        members = crowd_build(config, base_url, campaign["join_path"], truth, stop, args.seed)
        crowd_seconds, cap_hit = crowd_run(members, config, args.progress_every)
        queue = tasks_wait(60.0)
        spammers = {member.server_id for member in members if member.spammer}
        figures = figures_read(researcher, campaign["id"], truth, spammers)
        report = researcher.call("GET", f"/api/campaigns/{campaign['id']}/quality/").json()
        block = researcher.browser.get(
            f"/campaigns/{campaign['id']}/labeling/", headers={"HX-Request": "true"}
        ).text
    finally:
        if researcher is not None:
            researcher.close()
        _stop(server, group=True)
        _stop(tasks, group=False)
        log.close()
        if database and not args.keep_database:
            from django.db import connections

            connections.close_all()
            drop_database(database)
        state.cleanup()

    outcome = Outcome(
        campaign=campaign,
        members=members,
        figures=figures,
        report=report,
        block=block,
        queue=queue,
        crowd_seconds=crowd_seconds,
        cap_hit=cap_hit,
        wall=time.monotonic() - started,
        log_name=log.name,
        manual_steps=researcher.manual_steps,
    )
    print_setup(config, args, outcome, pairs, postgres=bool(database))
    errors = print_crowd(config, outcome)
    print_result(config, outcome)
    return 1 if errors or not figures.judgments else 0


if __name__ == "__main__":
    sys.exit(main())
