"""Load benchmark: 200 simulated crowdworkers at once against gunicorn and PostgreSQL.

The app runs under gunicorn (gthread) against a PostgreSQL database on loopback that
this benchmark creates, migrates, fills and drops (`cfannotate_load` unless told
otherwise; never `postgres` or `test`), with a `db_worker` on the `default` queue
running quality control as assignments end, as in production. Every simulated worker
(`bench/worker_client.py`) does a whole assignment at once, as the page's htmx does:
join link, instructions, then per round one save per counterfactual and the submit,
whose answer is the next round (a page load only for the first round, the training
feedback and the completion page). With no think time (the default) the workers ask as fast
as the server answers, which measures its capacity: the latency is then the queue
that 200 waiting clients make. `--think S` pauses a mean of S seconds before each of
a worker's four decisions per round, an offered load of about 200 x 3 / (4 S)
judgments per second, which measures the latency at that load; paced workers arrive
spread over the first 4 S seconds. Workers keep coming until the pool of
units is empty. Then the database is checked against what the server acknowledged:
every acknowledged submit's judgments stored with the answers sent (lost=0), no worker
judged a counterfactual twice and no unit went past K (duplicates=0), and every unit
has exactly K submitted rounds.

    python bench/load.py --quick      # 200 workers x 1 real round, no training or gold
    python bench/load.py              # 200 workers x (1 training + 20 real + 1 gold rounds)
    python bench/load.py --think 2    # the same at a paced load (~75 judgments/s offered)

The last line reads `RESULT load p99_ms=... judgments_per_s=... lost=0 duplicates=0`.
"""

import argparse
import logging
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from bench.labeling import (  # noqa: E402 (needs the path above)
    _free_port,
    percentile,
    populate,
    prepare_database,
)

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/cfannotate_load"
logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per warm-up request
K = 2


def _fail(message: str) -> None:
    print(f"load benchmark: {message}", file=sys.stderr)
    sys.exit(2)


def drop_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[-1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def start_server(
    env: dict,
    port: int,
    processes: int = 2,
    threads: int = 8,
    *,
    keep_alive: int = 0,
    patience: float = 180,
    log=None,
) -> subprocess.Popen:
    """gunicorn (gthread) on loopback, returned once every process has loaded the app.

    A process imports the ML library (spaCy, torch) as it starts and the URL
    configuration on its first request (about 15 s together on a busy 2-core machine),
    so warm-up requests go out in parallel until a round of them all comes back fast:
    none of that is measured.
    """
    import httpx

    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen(
        [
            str(gunicorn),
            "cfannotate.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(processes),
            "--threads",
            str(threads),
            "--worker-class",
            "gthread",
            "--keep-alive",
            str(keep_alive),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
        stderr=log,
        start_new_session=True,  # its own process group: a fault test can kill it whole
    )

    def probe(_) -> float:
        started = time.perf_counter()
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=60).raise_for_status()
        except httpx.HTTPError:
            time.sleep(0.2)
            return float("inf")
        return time.perf_counter() - started

    deadline = time.monotonic() + patience
    with ThreadPoolExecutor(max_workers=processes * threads) as pool:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                _fail(f"gunicorn exited with status {server.returncode}.")
            if max(pool.map(probe, range(processes * threads * 2))) < 1.0:
                return server
    server.kill()
    _fail(f"gunicorn did not answer /healthz quickly within {patience:.0f} s.")


def start_task_worker(env: dict) -> subprocess.Popen:
    """The `default` queue's worker: quality control after each assignment."""
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--queue-name",
            "default",
            "--interval",
            "0.5",
            "--no-startup-delay",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def run_workers(base_url: str, join_path: str, names: list[str], **options) -> list:
    from bench.worker_client import SimulatedWorker

    think = options.get("think_seconds", 0.0)
    arrivals = random.Random(len(names))
    simulated = [
        SimulatedWorker(
            base_url,
            join_path,
            name,
            seed=number,
            htmx=True,
            # Paced workers arrive over one round's worth of thinking, not all at once.
            arrive_after=arrivals.uniform(0, 4 * think),
            **options,
        )
        for number, name in enumerate(names)
    ]
    with ThreadPoolExecutor(max_workers=len(simulated)) as pool:
        return list(pool.map(SimulatedWorker.run, simulated))


def drain_pool(base_url: str, join_path: str, prefix: str, batch: int = 8, **options) -> list:
    """Late workers until nobody gets work: units whose claims fell short are filled."""
    results = []
    for wave in range(50):
        names = [f"{prefix}{wave}-{number:02d}" for number in range(batch)]
        done = run_workers(base_url, join_path, names, **options)
        results += done
        if all(result.no_work or result.errors for result in done):
            break
    return results


def check_database(results) -> dict[str, int]:
    """What the database holds against what the server acknowledged.

    lost: acknowledged submits whose round is not submitted, or whose stored answers
    differ from the ones sent; duplicates: counterfactuals judged twice by one worker,
    units with more claims or submitted rounds than K; off_k: units not at exactly K
    submitted rounds from K distinct workers.
    """
    from django.db.models import Count, F, Q
    from django.urls import resolve

    from cfannotate.core.worker_tokens import assignment_token_read
    from cfannotate.labeling.models import GoldItem, Judgment, LabelingUnit, Round, UnitItem

    rounds = {
        (assignment_id, position): (round_id, unit_id, gold_id)
        for round_id, assignment_id, position, unit_id, gold_id in Round.objects.filter(
            submitted_at__isnull=False
        ).values_list("id", "assignment_id", "position", "unit_id", "gold_round_id")
    }
    order: dict[tuple[str, int], list[int]] = defaultdict(list)
    for unit_id, candidate_id in UnitItem.objects.order_by("position").values_list(
        "unit_id", "candidate_id"
    ):
        order["unit", unit_id].append(candidate_id)
    for gold_id, candidate_id in GoldItem.objects.order_by("position").values_list(
        "gold_round_id", "candidate_id"
    ):
        order["gold", gold_id].append(candidate_id)
    stored = {
        (round_id, candidate_id): (is_valid, label)
        for round_id, candidate_id, is_valid, label in Judgment.objects.values_list(
            "round_id", "candidate_id", "is_valid", "label__value"
        )
    }
    lost = 0
    for result in results:
        for path, data in result.acknowledged:
            match = resolve(path)
            assignment_id = assignment_token_read(match.kwargs["token"]).assignment_id
            found = rounds.get((assignment_id, match.kwargs["position"]))
            if found is None:
                lost += 1
                continue
            round_id, unit_id, gold_id = found
            candidates = order["unit", unit_id] if unit_id else order["gold", gold_id]
            for index, candidate_id in enumerate(candidates, start=1):
                sent = (data[f"valid-{index}"] == "valid", data[f"label-{index}"])
                if stored.get((round_id, candidate_id)) != sent:
                    lost += 1
                    break
    twice = (
        Judgment.objects.values("candidate", "round__worker")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .count()
    )
    beyond_k = LabelingUnit.objects.filter(
        Q(completed__gt=F("judgments_needed")) | Q(claims__gt=F("judgments_needed"))
    ).count()
    units = LabelingUnit.objects.annotate(
        submitted=Count("rounds", filter=Q(rounds__submitted_at__isnull=False)),
        workers=Count(
            "rounds__worker", filter=Q(rounds__submitted_at__isnull=False), distinct=True
        ),
    )
    off_k = sum(
        1
        for submitted, workers, needed in units.values_list(
            "submitted", "workers", "judgments_needed"
        )
        if not submitted == workers == needed
    )
    return {"lost": lost, "duplicates": twice + beyond_k, "off_k": off_k}


def _cpu(usage) -> float:
    return usage.ru_utime + usage.ru_stime


def process_tree_cpu(pid: int) -> float:
    """CPU seconds used so far by a process and its children (Linux /proc)."""
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += [int(child) for child in (task / "children").read_text().split()]
    return sum(_stat_cpu(one) for one in pids)


def _stat_cpu(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0  # gone since it was listed
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def backends_cpu() -> float:
    """CPU seconds used so far by every PostgreSQL backend of this database (PostgreSQL on
    this machine; backends that closed in between are not counted)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return sum(_stat_cpu(pid) for (pid,) in cursor.fetchall())


def task_counts() -> dict[str, int]:
    from django.db.models import Count
    from django_tasks_db.models import DBTaskResult

    return dict(DBTaskResult.objects.values_list("status").annotate(n=Count("id")))


def tasks_wait(seconds: float) -> dict[str, int]:
    """Wait (reading the task table) until no task is due or running; the counts by status
    (a READY one left is scheduled for later: the periodic sweep)."""
    from django.db import connection
    from django.db.models import Count
    from django_tasks_db.models import DBTaskResult

    deadline = time.monotonic() + seconds
    while True:
        busy = DBTaskResult.objects.ready().exists() or DBTaskResult.objects.running().exists()
        if not busy or time.monotonic() > deadline:
            counts = dict(DBTaskResult.objects.values_list("status").annotate(n=Count("id")))
            connection.close()
            return counts
        time.sleep(0.5)


def arguments() -> tuple[argparse.Namespace, int, int]:
    """The command line: (its arguments, real rounds, training and gold rounds each)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="One real round per worker, no training or gold round (within 60 s).",
    )
    parser.add_argument("--workers", type=int, default=200, help="Concurrent workers.")
    parser.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="Mean seconds a worker pauses before each decision (4 per round; default 0).",
    )
    parser.add_argument("--rounds", type=int, default=None, help="Real rounds per assignment.")
    parser.add_argument("--processes", type=int, default=2, help="gunicorn worker processes.")
    parser.add_argument("--threads", type=int, default=8, help="Threads per process.")
    parser.add_argument(
        "--keep-alive",
        type=int,
        default=0,
        help="gunicorn keep-alive seconds (default 0: close after each response, so that "
        "new connections spread over the processes instead of sticking to one).",
    )
    parser.add_argument(
        "--no-task-worker", action="store_true", help="Leave quality control queued."
    )
    parser.add_argument("--keep-database", action="store_true")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("LOAD_DATABASE_URL", DEFAULT_DATABASE),
        help="A scratch database; it is dropped and created.",
    )
    args = parser.parse_args()
    rounds = args.rounds or (1 if args.quick else 20)
    extra_rounds = 0 if args.quick else 1  # training rounds, and gold rounds per assignment
    if args.workers < 1 or rounds < 1:
        _fail("--workers and --rounds must be at least 1.")
    if not 0 <= args.think <= 60:
        _fail("--think must be between 0 and 60 seconds.")
    return args, rounds, extra_rounds


def campaign_prepare(workers: int, rounds: int, extra_rounds: int) -> str:
    """The campaign, its units filled for `workers`: its join path."""
    from django.urls import reverse

    from cfannotate.campaigns.models import Campaign
    from cfannotate.core.worker_tokens import join_token

    campaign_id = populate(workers=workers, rounds=rounds, k=K)
    # Quality control runs (and is measured), but its re-queues and the replacement
    # of filtered workers' rounds, which depend on the random answers, would leave
    # "exactly K per unit" without a fixed K: nobody is filtered, nothing re-queued.
    Campaign.objects.filter(pk=campaign_id).update(
        max_requeues=0,
        min_median_seconds=0,
        min_gold_share=0,
        label_distribution_threshold=1,
        training_rounds=extra_rounds,
        gold_rounds_per_assignment=extra_rounds,
    )
    return reverse("join", kwargs={"token": join_token(campaign_id)})


@dataclass
class LoadRun:
    """What the crowd did, what it cost, and what the database holds afterwards."""

    results: list  # the measured workers'
    late: list  # the workers who drained the pool afterwards
    wall: float
    server_cpu: float
    client_cpu: float
    database_cpu: float
    log_name: str
    figures: dict[str, int]  # check_database's
    queue: dict[str, int]  # task rows by status

    @property
    def errors(self) -> list:
        return [error for result in self.results + self.late for error in result.errors]

    def milliseconds(self, kind: str) -> list[float]:
        """Latencies of one kind of request (`serve`, `save`, `submit`) in ms."""
        return [s * 1000 for result in self.results for s in getattr(result, f"{kind}_seconds")]

    @property
    def judgments(self) -> int:
        return sum(len(data) // 2 for result in self.results for _, data in result.acknowledged)

    @property
    def requests(self) -> int:
        return sum(len(self.milliseconds(kind)) for kind in ("serve", "save", "submit"))


def crowd_measure(env: dict, args: argparse.Namespace, join_path: str) -> LoadRun:
    """The server (and task worker) up, the crowd timed against it, then the pool drained,
    the queue waited for and the database checked."""
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (kept for the report)
        "w", prefix="cfannotate-load-", suffix=".log", delete=False
    )
    server = start_server(
        env, port, args.processes, args.threads, keep_alive=args.keep_alive, log=log
    )
    tasks = None if args.no_task_worker else start_task_worker(env)
    try:
        names = [f"load-{number:04d}" for number in range(args.workers)]
        server_cpu = process_tree_cpu(server.pid)
        database_cpu = backends_cpu()
        client_cpu = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        results = run_workers(base_url, join_path, names, think_seconds=args.think)
        wall = time.perf_counter() - started
        client_cpu = _cpu(resource.getrusage(resource.RUSAGE_SELF)) - _cpu(client_cpu)
        server_cpu = process_tree_cpu(server.pid) - server_cpu
        database_cpu = backends_cpu() - database_cpu
        late = drain_pool(base_url, join_path, "late-")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
    if tasks is not None:
        tasks_wait(60)  # the due ones; the quality sweep waits for its time
        tasks.terminate()
        tasks.wait(timeout=30)
    return LoadRun(
        results=results,
        late=late,
        wall=wall,
        server_cpu=server_cpu,
        client_cpu=client_cpu,
        database_cpu=database_cpu,
        log_name=log.name,
        figures=check_database(results + late),
        queue=task_counts(),
    )


def print_setup(args: argparse.Namespace, rounds: int, extra_rounds: int) -> None:
    """The crowd, its pacing and the server, in one line."""
    pacing = (
        f"think time {args.think:g} s per decision (offered at most "
        f"{args.workers * 3 / (4 * args.think):.0f} judgments/s)"
        if args.think
        else "think time 0"
    )
    print(
        f"{args.workers} concurrent workers, {pacing}, each {extra_rounds} training + "
        f"{rounds} real + {extra_rounds} gold rounds of 3 (3 htmx saves, then the submit, "
        "answered with the next round), "
        f"K={K}; gunicorn "
        f"{args.processes} processes x {args.threads} threads (gthread, keep-alive "
        f"{args.keep_alive} s), PostgreSQL on loopback"
    )


def print_latencies(run: LoadRun) -> None:
    """p50, p95 and p99 of each kind of request, as a table."""
    print(f"{'':16}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'requests':>10}")
    for name, values in (
        ("serve a round", run.milliseconds("serve")),
        ("save an item", run.milliseconds("save")),
        ("submit a round", run.milliseconds("submit")),
    ):
        print(
            f"{name:16}{percentile(values, 0.5):10.1f}{percentile(values, 0.95):10.1f}"
            f"{percentile(values, 0.99):10.1f}{len(values):10d}"
        )


def print_totals(run: LoadRun) -> None:
    """Throughput, what the database check found, and the CPU each side spent."""
    judgments, requests, wall, figures = run.judgments, run.requests, run.wall, run.figures
    print(
        f"{judgments} judgments in {wall:.1f} s ({judgments / wall:.1f}/s, "
        f"{requests / wall:.0f} round requests/s); "
        f"{sum(r.retries for r in run.results)} retries; "
        f"{len(run.late)} late workers; {len(run.errors)} client errors; "
        f"quality tasks {run.queue}; lost={figures['lost']} duplicates={figures['duplicates']} "
        f"units off K={figures['off_k']}"
    )
    server_cpu, client_cpu, database_cpu = run.server_cpu, run.client_cpu, run.database_cpu
    print(
        f"CPU during the run: server {server_cpu:.1f} s ({1000 * server_cpu / requests:.1f} ms "
        f"per round request), clients {client_cpu:.1f} s "
        f"({1000 * client_cpu / requests:.1f} ms), PostgreSQL {database_cpu:.1f} s "
        f"({1000 * database_cpu / requests:.1f} ms), on {os.cpu_count()} cores for {wall:.1f} s; "
        f"server CPU per judgment {1000 * server_cpu / max(judgments, 1):.1f} ms"
    )


def print_result(args: argparse.Namespace, run: LoadRun) -> None:
    """The first client errors, the server log, and the RESULT line."""
    for error in run.errors[:5]:
        print(f"  error: {error}")
    print(f"server log: {run.log_name}")
    serve, save, submit = (run.milliseconds(kind) for kind in ("serve", "save", "submit"))
    p99 = percentile(serve + save + submit, 0.99)
    figures = run.figures
    print(
        f"RESULT load p99_ms={p99:.1f} judgments_per_s={run.judgments / run.wall:.1f} "
        f"lost={figures['lost']} duplicates={figures['duplicates']} off_k={figures['off_k']} "
        f"serve_p99_ms={percentile(serve, 0.99):.1f} submit_p99_ms={percentile(submit, 0.99):.1f} "
        f"workers={args.workers} think_s={args.think:g}"
    )


def main() -> int:
    args, rounds, extra_rounds = arguments()
    # The server, the task worker and this process sign and read the same tokens: they
    # share the state directory (its generated secret key) and nothing else of ours.
    env = prepare_database(
        args.database_url, keep=frozenset({"CFANNOTATE_STATE_DIR", "CFANNOTATE_SECRET_KEY"})
    )
    env["CFANNOTATE_LOG_LEVEL"] = "ERROR"
    from django.db import connection

    try:
        join_path = campaign_prepare(args.workers, rounds, extra_rounds)
        run = crowd_measure(env, args, join_path)
        connection.close()
    finally:
        if not args.keep_database:
            connection.close()
            drop_database(args.database_url)

    print_setup(args, rounds, extra_rounds)
    print_latencies(run)
    print_totals(run)
    print_result(args, run)
    return 1 if run.errors or any(run.figures.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
