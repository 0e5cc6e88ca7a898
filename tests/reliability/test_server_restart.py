"""The web server stopped or killed mid-load: clients retry, nothing is lost or doubled.

Twelve simulated workers (every click saved, think time 0, retrying what fails in
transit for up to two minutes) label through gunicorn; once rounds are coming in, the
server is stopped (SIGTERM to the master: graceful) or crashed (SIGKILL to the master
and its workers: requests cut off mid-transaction), then started again on the same
port. Afterwards the database must hold every submit the server acknowledged, with
the answers sent, no judgment twice, and every unit at exactly K.
"""

import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.load import check_database
from cfannotate.labeling.models import Round
from tests.factories import make_labeling_campaign
from tests.reliability.conftest import join_path, needs_postgresql, start_workers

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

WORKERS, ROUNDS, K = 12, 4, 2


def _wait_for_rounds(count: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while Round.objects.filter(submitted_at__isnull=False).count() < count:
        assert time.monotonic() < deadline, "no progress under load"
        time.sleep(0.1)


@pytest.mark.parametrize("how", ["terminate", "kill"])
def test_a_restarted_server_loses_and_doubles_nothing(gunicorn, how):
    campaign = make_labeling_campaign(
        units=WORKERS * ROUNDS // K,
        gold=2,
        training=1,
        k=K,
        rounds_per_assignment=ROUNDS,
        gold_rounds_per_assignment=1,
        max_requeues=0,
    )
    gunicorn.start()
    path = join_path(campaign)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = start_workers(pool, gunicorn.url, path, [f"w{n:02d}" for n in range(WORKERS)])
        _wait_for_rounds(WORKERS)  # about a round each: everyone is mid-assignment
        before = Round.objects.filter(submitted_at__isnull=False).count()
        getattr(gunicorn, how)()
        assert gunicorn.process.returncode in (0, -signal.SIGKILL)
        gunicorn.start()
        results = [future.result() for future in futures]
        late = start_workers(pool, gunicorn.url, path, [f"late{n}" for n in range(4)])
        results += [future.result() for future in late]

    assert not [error for result in results for error in result.errors]
    assert sum(result.retries for result in results) > 0  # the outage was felt
    assert Round.objects.filter(submitted_at__isnull=False).count() > before
    assert sum(bool(result.completion_code) for result in results) == WORKERS
    assert check_database(results) == {"lost": 0, "duplicates": 0, "off_k": 0}
