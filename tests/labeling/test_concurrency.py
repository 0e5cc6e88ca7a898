"""50 simulated workers label in parallel over HTTP; afterwards nothing is lost or doubled.

PostgreSQL only: it is the row locks (SELECT ... FOR UPDATE SKIP LOCKED) under real
concurrency that this checks; CI runs the suite on PostgreSQL.
"""

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Count
from django.urls import reverse
from django.utils import timezone

from bench.worker_client import SimulatedWorker
from cfannotate.core.worker_tokens import join_token
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    Judgment,
    LabelingUnit,
    Round,
    RoundKind,
)
from tests.factories import make_labeling_campaign

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL (set DATABASE_URL)"
    ),
]

K = 2
UNITS = 75
ROUNDS = 3  # real rounds per assignment: 50 workers x 3 = 150 = 75 units x K


def _wave(live_server, join_path, ids, abandon_after=None):
    workers = [
        SimulatedWorker(
            live_server.url,
            join_path,
            worker_id,
            abandon_after=abandon_after.get(worker_id) if abandon_after else None,
            seed=number,
        )
        for number, worker_id in enumerate(ids)
    ]
    with ThreadPoolExecutor(max_workers=len(workers)) as pool:
        return list(pool.map(SimulatedWorker.run, workers))


def test_parallel_workers_never_overbook_lose_or_duplicate(live_server):
    campaign = make_labeling_campaign(
        units=UNITS,
        gold=3,
        training=1,
        k=K,
        rounds_per_assignment=ROUNDS,
        gold_rounds_per_assignment=1,
        # Quality control runs after every round (and is exercised concurrently here),
        # but re-queues would make the expected count per unit depend on random answers.
        max_requeues=0,
    )
    join_path = reverse("join", kwargs={"token": join_token(campaign.id)})
    first_ids = [f"w{number:02d}" for number in range(50)]
    # Every fifth worker walks away after the training round and one more.
    quitters = {worker_id: 2 for worker_id in first_ids[::5]}
    results = _wave(live_server, join_path, first_ids, quitters)
    assert not [error for result in results for error in result.errors]
    assert sum(result.abandoned for result in results) == 10
    unfinished = [r for r in results if not r.abandoned and not r.completion_code]
    assert not unfinished, [(r.worker_id, r.rounds_submitted, r.no_work) for r in unfinished]

    # Their leases run out; the units they held go back to the pool.
    held = list(  # one entry per abandoned claim; a unit may appear twice
        Round.objects.filter(
            assignment__state=AssignmentState.ACTIVE, kind=RoundKind.REAL, submitted_at=None
        ).values_list("unit_id", flat=True)
    )
    assert held
    Assignment.objects.filter(state=AssignmentState.ACTIVE).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    later = []
    for wave in range(5):  # new workers until the pool is empty
        batch = _wave(live_server, join_path, [f"late{wave}-{n:02d}" for n in range(12)])
        assert not [error for result in batch for error in result.errors]
        later += batch
        if all(result.no_work for result in batch):
            break

    # Every unit: exactly K submitted rounds, from K distinct workers.
    for unit in LabelingUnit.objects.filter(campaign=campaign):
        submitted = unit.rounds.filter(submitted_at__isnull=False)
        assert unit.completed == submitted.count() == K, unit
        assert submitted.values("worker").distinct().count() == K
        assert unit.claims == K
    # Abandoned units were reassigned to someone else, who finished them. (A name in the
    # link is no identity: the server's own id for each worker is in its signed cookie.)
    late_ids = {result.server_worker_id for result in later if not result.no_work}
    assert late_ids and "" not in late_ids
    reassigned = Round.objects.filter(unit_id__in=held, submitted_at__isnull=False)
    assert reassigned.filter(worker__external_id__in=late_ids).count() == len(held)
    # Every submitted round has one complete judgment per counterfactual; none twice.
    submitted_rounds = Round.objects.filter(submitted_at__isnull=False)
    judgments = Judgment.objects.filter(round__in=submitted_rounds)
    assert (
        not judgments.filter(is_valid=None).exists() and not judgments.filter(label=None).exists()
    )
    per_worker = judgments.values("candidate", "round__worker").annotate(n=Count("id"))
    assert not per_worker.filter(n__gt=1).exists()
    expected = sum(result.rounds_submitted for result in results + later)
    assert submitted_rounds.count() == expected
