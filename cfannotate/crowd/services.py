"""Writes on workers: find or register a worker by platform id."""

from django.db import IntegrityError, transaction

from cfannotate.core.exceptions import Forbidden, InvalidInput
from cfannotate.crowd.models import Platform, Worker, WorkerStatus

MAX_EXTERNAL_ID = 200


def worker_get_or_create(*, platform: str, external_id: str) -> Worker:
    """The worker with this platform id, registered on first sight; blocked workers refused."""
    external_id = (external_id or "").strip()
    if platform not in Platform.values:
        raise InvalidInput(f"Unknown platform {platform!r}.", fields={"platform": ["Unknown."]})
    if not external_id:
        raise InvalidInput("A worker id is required.", fields={"worker_id": ["Required."]})
    if len(external_id) > MAX_EXTERNAL_ID or not external_id.isprintable():
        raise InvalidInput(
            f"A worker id is at most {MAX_EXTERNAL_ID} printable characters.",
            fields={"worker_id": ["Too long or not printable."]},
        )
    worker = Worker.objects.filter(platform=platform, external_id=external_id).first()
    if worker is None:
        try:
            with transaction.atomic():
                worker = Worker.objects.create(platform=platform, external_id=external_id)
        except IntegrityError:
            # Another request registered the same worker a moment ago.
            worker = Worker.objects.get(platform=platform, external_id=external_id)
    if worker.status == WorkerStatus.BLOCKED:
        raise Forbidden("This worker account cannot take tasks in this project.")
    return worker
