import pytest

from cfannotate.core.exceptions import Forbidden, InvalidInput
from cfannotate.crowd.models import Platform, Worker, WorkerStatus
from cfannotate.crowd.services import worker_get_or_create

pytestmark = pytest.mark.django_db


def test_a_worker_is_registered_once_and_found_again():
    first = worker_get_or_create(platform=Platform.LINK, external_id=" w1 ")
    assert worker_get_or_create(platform=Platform.LINK, external_id="w1").id == first.id
    assert Worker.objects.count() == 1


@pytest.mark.parametrize(
    ("platform", "external_id", "message"),
    [
        ("fiverr", "w1", "Unknown platform"),
        (Platform.LINK, "", "worker id is required"),
        (Platform.LINK, "x" * 201, "at most 200"),
        (Platform.LINK, "tab\there", "printable"),
    ],
)
def test_bad_worker_ids_are_refused(platform, external_id, message):
    with pytest.raises(InvalidInput, match=message):
        worker_get_or_create(platform=platform, external_id=external_id)
    assert not Worker.objects.exists()


def test_a_blocked_worker_is_refused():
    Worker.objects.create(platform=Platform.LINK, external_id="w9", status=WorkerStatus.BLOCKED)
    with pytest.raises(Forbidden, match="cannot take tasks"):
        worker_get_or_create(platform=Platform.LINK, external_id="w9")
