"""Worker entry pages: the campaign's link and named links with quotas."""

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.crowd.services import invitation_link_close, invitation_link_create
from cfannotate.crowd.tokens import assignment_token_read, join_token, link_token
from cfannotate.labeling.models import Assignment

pytestmark = pytest.mark.django_db


def _link_url(link) -> str:
    return reverse("join-link", kwargs={"token": link_token(link.id)})


def test_a_named_link_starts_assignments_up_to_its_quota(client, campaign):
    link = invitation_link_create(campaign=campaign, name="Lab members", quota=1)
    assert client.get(_link_url(link)).status_code == 200
    first = client.post(_link_url(link) + "?worker=ann")
    assert first.status_code == 302
    assert client.post(_link_url(link) + "?worker=ann")["Location"] == first["Location"]
    full = client.post(_link_url(link) + "?worker=bob")
    assert full.status_code == 409 and b"used up" in full.content
    # A newcomer is told before clicking Start; this browser (ann's cookie) may resume.
    assert Client().get(_link_url(link)).status_code == 409
    assert client.get(_link_url(link)).status_code == 200
    assert Assignment.objects.count() == 1


def test_link_tokens_carry_the_bound_ids(client, campaign):
    response = client.post(reverse("join", kwargs={"token": join_token(campaign.id)}))
    token = response["Location"].split("/w/")[1].split("/")[0]
    assert assignment_token_read(token).binding
    assert client.get(response["Location"]).status_code == 200


def test_closed_and_unknown_links_say_so(client, campaign):
    link = invitation_link_create(campaign=campaign, name="Old")
    invitation_link_close(link=link)
    closed = client.post(_link_url(link))
    assert closed.status_code == 403 and b"closed by the researcher" in closed.content
    assert client.get(reverse("join-link", kwargs={"token": "x"})).status_code == 403
    gone = reverse("join-link", kwargs={"token": link_token(99999)})
    assert client.get(gone).status_code == 404
    assert not Assignment.objects.exists()


def test_link_workers_pages_deny_all_framing(client, campaign):
    response = client.post(reverse("join", kwargs={"token": join_token(campaign.id)}))
    page = client.get(response["Location"])
    assert "frame-ancestors 'none'" in page["Content-Security-Policy"]
    assert page["X-Frame-Options"] == "DENY"
