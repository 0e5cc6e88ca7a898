"""Benchmark: every researcher page on the demo data, warm and on a process's first load.

The demo's data (`cfannotate.demo.setup.demo_setup`: the two fixture campaigns and
the labeled example with its simulated crowd and quality control; nothing generated)
goes into a fresh SQLite database in a temporary directory. Every researcher page of the
labeled example is loaded with Django's test client as its owner, `DEBUG` off: the
median and the slowest of `--loads` loads after one unmeasured load, and the queries
one load makes. The baseline, measured the same way in the same run, is the cheapest
page the stack serves (`/healthz`): the ratio says how much a page costs above the
framework's floor.

A page's first load in a fresh process (a new gunicorn worker) is timed too, in child
processes: the settings page without the generator catalog in the shared cache, which
imports every generator's module (the 9 s first load of issue 24), then with it (as
`demo_setup` leaves it); then every page's first load in a third child.

    python bench/pages.py               # 15 loads a page, about a minute and a half
    python bench/pages.py --quick       # 5 loads a page
    python bench/pages.py --quick --crowd 2000   # and a crowd of 2,000 more workers

`--crowd N` gives the labeled example N more workers, as a large crowd leaves them: each with
a standing (every third filtered), three submitted assignments and a proposed decision for
each (approve, or reject for a filtered worker), so the quality page's lists are as long as a
research-sized campaign's. Each page's response size is printed beside its time.

The last line reads `RESULT pages slowest_ms=... slowest=... floor_ms=... over_300ms=...
largest_kb=... largest=... crowd=... settings_first_ms=... settings_first_uncached_ms=...
first_slowest_ms=...`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

BUDGET_MS = 300.0  # issue 24: every researcher page answers in under 300 ms
# Blocks that their section's page loads or swaps with htmx: loaded as htmx loads them (a
# plain GET of one is sent to the section page).
HTMX_BLOCKS = frozenset(
    {"original-upload", "run-progress", "candidate-import", "labeling-block"}
    | {"quality-report", "quality-decisions"}
)


def request_headers(name: str) -> dict[str, str]:
    """The headers a browser sends when it loads the page or block `name`."""
    return {"HX-Request": "true"} if name in HTMX_BLOCKS else {}


def _configure(state_dir: str) -> None:
    """Django on the benchmark's own SQLite database, as a production process runs it."""
    os.environ.pop("DATABASE_URL", None)
    os.environ.update(
        {
            "CFANNOTATE_STATE_DIR": state_dir,
            "CFANNOTATE_DEBUG": "0",
            "CFANNOTATE_ALLOWED_HOSTS": "testserver",
            "DJANGO_SETTINGS_MODULE": "cfannotate.settings",
        }
    )
    import django

    django.setup()


def researcher_pages() -> dict[str, str]:
    """Every researcher page of the demo's labeled example, by route name."""
    from django.urls import reverse

    from cfannotate.campaigns.models import Campaign
    from cfannotate.demo.setup import EXAMPLE_NAME

    campaign = Campaign.objects.get(name=EXAMPLE_NAME)
    candidate = campaign.candidates.order_by("id").first()
    by_id = {"campaign_id": campaign.id}
    on_candidate = {**by_id, "candidate_id": candidate.id}
    pages = {name: reverse(name) for name in ("home", "campaign-new", "api-token")}
    for name in (
        "campaign-detail",
        "campaign-data",
        "campaign-generation",
        "campaign-labeling",
        "campaign-exports",
        "campaign-settings",
        "original-upload",
        "run-progress",
        "candidate-import",
        "candidate-review",
        "labeling-block",
        "gold-page",
        "crowd-platforms",
        "quality-page",
        "quality-report",
        "quality-decisions",
        "evaluation-fragment",
    ):
        pages[name] = reverse(name, kwargs=by_id)
    pages["candidate-row"] = reverse("candidate-row", kwargs=on_candidate)
    pages["candidate-edit"] = reverse("candidate-edit", kwargs=on_candidate)
    on_original = {**by_id, "original_id": candidate.original_id}
    pages["gold-original"] = reverse("gold-original", kwargs=on_original)
    return pages


def _client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    from cfannotate.demo.setup import DEMO_USERNAME

    client = Client()
    client.force_login(get_user_model().objects.get(username=DEMO_USERNAME))
    return client


def _get(client, url: str, headers: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    response = client.get(url, headers=headers)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise SystemExit(f"pages benchmark: {url} answered {response.status_code}")
    return elapsed * 1000


def first_loads(state_dir: str, settings_only: bool) -> None:
    """In a fresh process: the settings page's first load, or every page's first load
    (the settings page's last: a cached catalog imports the generators in the background,
    which would slow the pages after it), as JSON."""
    _configure(state_dir)
    client = _client()
    pages = researcher_pages()
    _get(client, "/healthz")  # the URLconf and middleware, which any first request loads
    if settings_only:
        pages = {"campaign-settings": pages["campaign-settings"]}
    order = [*[name for name in pages if name != "campaign-settings"], "campaign-settings"]
    print(json.dumps({name: _get(client, pages[name], request_headers(name)) for name in order}))


def _child_first_loads(state_dir: str, *, settings_only: bool) -> dict[str, float]:
    child = subprocess.run(
        [
            sys.executable,
            __file__,
            "--settings-first-load" if settings_only else "--first-loads",
            state_dir,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if child.returncode:
        raise SystemExit("pages benchmark: the first-load process failed:\n" + child.stderr[-2000:])
    return json.loads(child.stdout.strip().splitlines()[-1])


def build(state_dir: str) -> float:
    """A migrated database with the demo's data; seconds it took."""
    from django.core.management import call_command

    from cfannotate.demo.setup import demo_setup

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    demo_setup()
    return time.perf_counter() - started


def add_crowd(workers: int) -> None:
    """`workers` more workers in the labeled example, with standings, submitted assignments
    and proposed decisions (see the module's doc), written in bulk."""
    import secrets
    from datetime import timedelta

    from django.utils import timezone

    from cfannotate.campaigns.models import Campaign
    from cfannotate.crowd.models import Worker
    from cfannotate.demo.setup import EXAMPLE_NAME
    from cfannotate.labeling.models import Assignment
    from cfannotate.quality.models import WorkerDecision, WorkerQuality

    campaign = Campaign.objects.get(name=EXAMPLE_NAME)
    now = timezone.now()
    crowd = Worker.objects.bulk_create(
        Worker(platform="link", external_id=f"bench-{number:06}") for number in range(workers)
    )
    WorkerQuality.objects.bulk_create(
        WorkerQuality(
            campaign=campaign,
            worker=worker,
            qualified=number % 3 != 0,
            reasons=[] if number % 3 else ["median 4 s a round, under the threshold"],
            settled=True,
            rounds=30,
            median_seconds=10.0 + number % 40,
            gold_correct=3 + number % 4,
            gold_total=6,
            label_counts={"positive": 10 + number % 7, "negative": 10},
            distribution_distance=(number % 20) / 40,
        )
        for number, worker in enumerate(crowd)
    )
    assignments = Assignment.objects.bulk_create(
        Assignment(
            campaign=campaign,
            worker=worker,
            token_nonce=secrets.token_hex(16),
            state="submitted",
            lease_expires_at=now + timedelta(hours=1),
            submitted_at=now,
        )
        for worker in crowd
        for _ in range(3)
    )
    filtered = {worker.pk for number, worker in enumerate(crowd) if number % 3 == 0}
    WorkerDecision.objects.bulk_create(
        WorkerDecision(
            campaign=campaign,
            worker_id=assignment.worker_id,
            assignment=assignment,
            action="reject" if assignment.worker_id in filtered else "approve",
            reason="Failed the gold rounds." if assignment.worker_id in filtered else "Thanks.",
        )
        for assignment in assignments
    )


def measure(
    client, url: str, loads: int, headers: dict[str, str] | None = None
) -> tuple[float, float, int, int]:
    """(median ms, slowest ms, queries, response bytes) of `loads` loads after an
    unmeasured one."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _get(client, url, headers)
    times = [_get(client, url, headers) for _ in range(loads)]
    with CaptureQueriesContext(connection) as queries:
        size = len(client.get(url, headers=headers).content)
    return statistics.median(times), max(times), len(queries), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 loads a page")
    parser.add_argument("--loads", type=int, default=None, help="measured loads a page")
    parser.add_argument(
        "--crowd", type=int, default=0, metavar="N", help="N more workers in the labeled example"
    )
    parser.add_argument("--first-loads", metavar="STATE_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--settings-first-load", metavar="STATE_DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.crowd < 0:
        parser.error(f"--crowd is a number of workers, 0 or more (got {args.crowd})")
    if args.first_loads or args.settings_first_load:
        first_loads(args.first_loads or args.settings_first_load, not args.first_loads)
        return
    loads = args.loads or (5 if args.quick else 15)

    with tempfile.TemporaryDirectory(prefix="cfannotate-pages-") as state_dir:
        _configure(state_dir)
        from django.core.cache import cache

        seconds = build(state_dir)
        print(f"demo data: {seconds:.1f}s (migrate and demo_setup, no generation)")
        if args.crowd:
            started = time.perf_counter()
            add_crowd(args.crowd)
            print(
                f"crowd: {args.crowd} more workers, {3 * args.crowd} decisions "
                f"({time.perf_counter() - started:.1f}s)"
            )

        # 1. First loads in fresh processes: the settings page without the catalog in the
        # cache (the child stores it), then with it; then every page.
        cache.clear()
        uncached = _child_first_loads(state_dir, settings_only=True)["campaign-settings"]
        cached = _child_first_loads(state_dir, settings_only=True)["campaign-settings"]
        first = _child_first_loads(state_dir, settings_only=False)

        # 2. Warm loads here, and the floor.
        client = _client()
        floor, *_ = measure(client, "/healthz", loads)
        rows = []
        for name, url in researcher_pages().items():
            median, slowest, queries, size = measure(client, url, loads, request_headers(name))
            rows.append((name, median, slowest, queries, first[name], size))

    print(f"{loads} loads a page after one unmeasured; floor /healthz {floor:.2f} ms (median)")
    print(
        f"{'page':22} {'median ms':>10} {'max ms':>8} {'x floor':>8} {'queries':>8} "
        f"{'first ms':>9} {'kB':>7}"
    )
    for name, median, slowest, queries, first_ms, size in rows:
        print(
            f"{name:22} {median:10.1f} {slowest:8.1f} {median / floor:8.1f} {queries:8d} "
            f"{first_ms:9.1f} {size / 1024:7.1f}"
        )
    print(
        f"settings page, first load in a fresh process: {cached:.0f} ms with the generator "
        f"catalog cached, {uncached:.0f} ms without (ratio {uncached / cached:.1f})"
    )
    name, median, *_ = max(rows, key=lambda row: row[1])
    first_name, first_slowest = max(first.items(), key=lambda item: item[1])
    over = sum(row[1] > BUDGET_MS for row in rows)
    largest_name, *_, largest = max(rows, key=lambda row: row[-1])
    print(
        f"RESULT pages slowest_ms={median:.1f} slowest={name} floor_ms={floor:.2f} "
        f"over_300ms={over} pages={len(rows)} largest_kb={largest / 1024:.0f} "
        f"largest={largest_name} crowd={args.crowd} settings_first_ms={cached:.0f} "
        f"settings_first_uncached_ms={uncached:.0f} first_slowest_ms={first_slowest:.0f} "
        f"first_slowest={first_name}"
    )


if __name__ == "__main__":
    main()
