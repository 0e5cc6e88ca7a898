"""The admin lists stored evaluations read-only."""

from django.urls import reverse

from cfannotate.evaluation.models import Evaluation
from tests.factories import make_campaign, make_user


def test_the_admin_lists_and_shows_evaluations(client, db):
    admin = make_user("root", is_staff=True, is_superuser=True)
    evaluation = Evaluation.objects.create(
        campaign=make_campaign(owner=admin), kind="table2", source="uploaded", result={"x": 1}
    )
    client.force_login(admin)

    listing = client.get(reverse("admin:evaluation_evaluation_changelist"))
    detail = client.get(reverse("admin:evaluation_evaluation_change", args=[evaluation.id]))

    assert listing.status_code == 200 and "Contrast set (Table 2)" in listing.content.decode()
    assert detail.status_code == 200
    assert client.get(reverse("admin:evaluation_evaluation_add")).status_code == 403
