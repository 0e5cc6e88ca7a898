"""Database connections dropped mid-load: requests fail cleanly or retry, the app recovers.

While twelve simulated workers label through gunicorn, every PostgreSQL backend of the
test database except the test's own is terminated (`pg_terminate_backend`), three
times. A request whose connection went away mid-transaction gets a plain 500 (its
transaction rolled back) and the client retries it; the next request on that thread
reconnects, because `CONN_HEALTH_CHECKS` makes Django test a persistent connection
(`CONN_MAX_AGE`) before reusing it. Afterwards everything acknowledged is stored once.
"""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from bench.load import check_database
from cfannotate.labeling.models import Round
from tests.factories import make_labeling_campaign
from tests.reliability.conftest import join_path, needs_postgresql, start_workers

pytestmark = [pytest.mark.django_db(transaction=True), needs_postgresql]

WORKERS, ROUNDS, K = 12, 4, 2


def _terminate_other_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _submitted() -> int:
    return Round.objects.filter(submitted_at__isnull=False).count()


def test_the_app_recovers_from_dropped_connections(gunicorn):
    from django.conf import settings

    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] > 0
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
    terminated = []
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = start_workers(pool, gunicorn.url, path, [f"w{n:02d}" for n in range(WORKERS)])
        after_cut = 0  # rounds submitted when the last connections were cut
        for wave in range(1, 4):
            deadline = time.monotonic() + 120
            # A round submitted since the last cut was stored through a new connection,
            # which the server keeps (CONN_MAX_AGE): there is one to cut again. (Without
            # that wait, a fast machine passed the next wave's count before anything
            # reconnected, and the cut found no connection.)
            while _submitted() < max(wave * WORKERS // 2, after_cut + 1):
                assert time.monotonic() < deadline, "no progress after dropped connections"
                time.sleep(0.05)
            terminated.append(_terminate_other_backends())
            after_cut = _submitted()
        results = [future.result() for future in futures]
        late = start_workers(pool, gunicorn.url, path, [f"late{n}" for n in range(4)])
        results += [future.result() for future in late]

    assert all(terminated), terminated  # the server's connections were there to cut
    assert not [error for result in results for error in result.errors]
    assert sum(bool(result.completion_code) for result in results) == WORKERS
    assert check_database(results) == {"lost": 0, "duplicates": 0, "off_k": 0}
