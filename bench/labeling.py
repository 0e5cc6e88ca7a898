"""Benchmark: simulated crowdworkers labeling through the real HTTP stack on PostgreSQL.

The app runs under gunicorn against a fresh PostgreSQL database on loopback. N
simulated workers (`bench/worker_client.py`) each join through the invitation link
and do a whole assignment (training, real and gold rounds) in parallel. The baseline,
measured in the same run at the same concurrency, is the cheapest page the stack
serves (`/healthz`): the ratio says how much a round costs above the framework floor.
Afterwards the database is checked: every acknowledged round is there with complete
judgments (lost=0), no worker judged a counterfactual twice and no unit went beyond
K (duplicates=0).

    python bench/labeling.py --quick          # 24 workers, within 60 s
    python bench/labeling.py --workers 200    # heavier

The last line reads `RESULT labeling p99_ms=... judgments_per_s=... lost=0 duplicates=0`.
"""

import argparse
import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/cfannotate_bench"


def _fail(message: str) -> None:
    print(f"labeling benchmark: {message}", file=sys.stderr)
    sys.exit(2)


def fresh_database(url: str) -> None:
    """Drop and create the benchmark database (never `postgres` or `test`)."""
    import psycopg

    name = url.rsplit("/", 1)[-1]
    if name in {"postgres", "test", ""}:
        _fail(f"refusing to drop the database {name!r}; name a scratch database.")
    admin = url.rsplit("/", 1)[0] + "/postgres"
    try:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as error:
        _fail(f"PostgreSQL is not reachable at {admin}: {str(error).strip().splitlines()[0]}")


def prepare_database(url: str, *, keep: frozenset[str] = frozenset()) -> dict[str, str]:
    """A fresh, migrated benchmark database with Django set up on it in this process.

    Returns the environment for the server processes: ours without `CFANNOTATE_*`
    settings (except those in `keep`), pointed at the benchmark database.
    """
    fresh_database(url)
    env = {
        **{
            key: value
            for key, value in os.environ.items()
            if not key.startswith("CFANNOTATE_") or key in keep
        },
        "DATABASE_URL": url,
        "CFANNOTATE_DEBUG": "0",
    }
    os.environ.update({"DATABASE_URL": url, "CFANNOTATE_DEBUG": "0"})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    migrate_in(env)

    import django

    django.setup()
    return env


def populate(*, workers: int, rounds: int, k: int) -> int:
    """A sentiment campaign open for labeling with exactly enough units for every worker."""
    from django.contrib.auth import get_user_model

    from cfannotate.campaigns.models import Campaign, CampaignStatus, Original
    from cfannotate.campaigns.services import campaign_create
    from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
    from cfannotate.labeling.models import GoldItem, GoldKind, GoldRound, LabelingUnit, UnitItem

    owner = get_user_model().objects.create_user(username="bench")
    campaign = campaign_create(
        owner=owner,
        name="Labeling benchmark",
        task_type="sentiment",
        settings={
            "rounds_per_assignment": rounds,
            "gold_rounds_per_assignment": 1,
            "training_rounds": 1,
            "judgments_per_candidate": k,
        },
    )
    labels = list(campaign.labels.all())
    units = workers * rounds // k
    originals = Original.objects.bulk_create(
        Original(
            campaign=campaign,
            external_id=f"o{number}",
            text=f"The film number {number} was a pleasant surprise for the whole family.",
            label=labels[number % 2],
        )
        for number in range(units + 4)
    )
    edits = ("was not", "was hardly", "was never")
    candidates = Candidate.objects.bulk_create(
        Candidate(
            campaign=campaign,
            original=original,
            text=original.text.replace("was", edit),
            source=CandidateSource.GENERATED,
            generator="bench",
            status=CandidateStatus.SELECTED,
        )
        for original in originals
        for edit in edits
    )
    by_original = {}
    for candidate in candidates:
        by_original.setdefault(candidate.original_id, []).append(candidate)
    unit_rows = LabelingUnit.objects.bulk_create(
        LabelingUnit(campaign=campaign, original=original, judgments_needed=k)
        for original in originals[:units]
    )
    UnitItem.objects.bulk_create(
        UnitItem(unit=unit, candidate=candidate, position=position)
        for unit in unit_rows
        for position, candidate in enumerate(by_original[unit.original_id], start=1)
    )
    for number, original in enumerate(originals[units:]):
        kind = GoldKind.TRAINING if number == 0 else GoldKind.GOLD
        gold = GoldRound.objects.create(campaign=campaign, original=original, kind=kind)
        for position, candidate in enumerate(by_original[original.id], start=1):
            candidate.status = CandidateStatus.GOLD
            candidate.save(update_fields=["status"])
            GoldItem.objects.create(
                gold_round=gold,
                candidate=candidate,
                position=position,
                expected_label=labels[0],
                explanation="A negated compliment reads as negative.",
            )
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.LABELING)
    return campaign.id


def migrate_in(env: dict[str, str]) -> None:
    """`manage.py migrate` in a fresh process with `env`; one clear line when it fails."""
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if migrate.returncode:
        _fail("migrate failed: " + (migrate.stderr.strip().splitlines() or ["?"])[-1])


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def baseline_latencies(base_url: str, concurrency: int, requests: int) -> list[float]:
    import httpx

    def one(_):
        with httpx.Client(base_url=base_url, timeout=30) as client:
            started = time.perf_counter()
            client.get("/healthz").raise_for_status()
            return time.perf_counter() - started

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(one, range(requests)))


def check_database(results) -> tuple[int, int]:
    """(lost, duplicates) as the database sees them after the run."""
    from django.db.models import Count, F

    from cfannotate.labeling.models import Judgment, LabelingUnit, Round

    acknowledged = sum(result.rounds_submitted for result in results)
    submitted = Round.objects.filter(submitted_at__isnull=False)
    incomplete = (
        Judgment.objects.filter(round__in=submitted)
        .filter(is_valid__isnull=True)
        .union(Judgment.objects.filter(round__in=submitted, label__isnull=True))
        .count()
    )
    lost = max(0, acknowledged - submitted.count()) + incomplete
    twice = (
        Judgment.objects.filter(round__in=submitted)
        .values("candidate", "round__worker")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    overbooked = LabelingUnit.objects.filter(completed__gt=F("judgments_needed")).count()
    return lost, twice + overbooked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="24 workers, 5 rounds each.")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None, help="Real rounds per assignment.")
    parser.add_argument("--processes", type=int, default=2, help="gunicorn worker processes.")
    parser.add_argument("--threads", type=int, default=16, help="Threads per process.")
    parser.add_argument(
        "--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_DATABASE)
    )
    args = parser.parse_args()
    workers = args.workers or (24 if args.quick else 100)
    rounds = args.rounds or (5 if args.quick else 20)
    k = 2

    env = prepare_database(args.database_url)
    from django.urls import reverse

    from bench.worker_client import SimulatedWorker
    from cfannotate.core.worker_tokens import join_token

    campaign_id = populate(workers=workers, rounds=rounds, k=k)
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    from bench.load import start_server  # load.py imports this module's helpers

    server = start_server(env, port, args.processes, args.threads, keep_alive=2)
    try:
        baseline = baseline_latencies(base_url, workers, workers * 10)
        join_path = reverse("join", kwargs={"token": join_token(campaign_id)})
        simulated = [
            SimulatedWorker(base_url, join_path, f"bench-{n:04d}", seed=n) for n in range(workers)
        ]
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(SimulatedWorker.run, simulated))
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)

    errors = [error for result in results for error in result.errors]
    serve = [s * 1000 for result in results for s in result.serve_seconds]
    submit = [s * 1000 for result in results for s in result.submit_seconds]
    floor = [s * 1000 for s in baseline]
    judgments = sum(result.rounds_submitted for result in results) * 3
    lost, duplicates = check_database(results)

    print(
        f"{workers} workers x (1 training + {rounds} real + 1 gold rounds), K={k}, "
        f"gunicorn {args.processes}x{args.threads} threads, PostgreSQL on loopback"
    )
    print(f"{'':18}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'requests':>10}")
    for name, values in (
        ("serve a round", serve),
        ("submit a round", submit),
        ("baseline /healthz", floor),
    ):
        print(
            f"{name:18}{percentile(values, 0.5):10.1f}{percentile(values, 0.95):10.1f}"
            f"{percentile(values, 0.99):10.1f}{len(values):10d}"
        )
    ratio = percentile(serve, 0.5) / percentile(floor, 0.5)
    print(
        f"serve p50 / baseline p50 = {ratio:.1f}x; {judgments} judgments in {wall:.1f} s; "
        f"{len(errors)} client errors; lost={lost} duplicates={duplicates}"
    )
    for error in errors[:5]:
        print(f"  error: {error}")
    p99 = percentile(serve + submit, 0.99)
    print(
        f"RESULT labeling p99_ms={p99:.1f} judgments_per_s={judgments / wall:.1f} "
        f"lost={lost} duplicates={duplicates} ratio={ratio:.1f} workers={workers}"
    )
    return 1 if errors or lost or duplicates else 0


if __name__ == "__main__":
    sys.exit(main())
