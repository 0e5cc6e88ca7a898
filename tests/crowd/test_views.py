"""Worker entry pages: the campaign's link, named links with quotas, personal links."""

from datetime import timedelta

import pytest
from django.core import signing
from django.core.signing import Signer, get_cookie_signer
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cfannotate.crowd.models import PersonalLink, Worker
from cfannotate.crowd.services import (
    invitation_link_close,
    invitation_link_create,
    personal_link_create,
    personal_link_revoke,
)
from cfannotate.crowd.tokens import (
    PERSONAL_LINK_SALT,
    assignment_token_read,
    join_token,
    link_token,
    personal_link_token,
)
from cfannotate.crowd.views import COOKIE_PREFIX, COOKIE_SALT
from cfannotate.labeling.models import Assignment

pytestmark = pytest.mark.django_db


def _link_url(link) -> str:
    return reverse("join-link", kwargs={"token": link_token(link.id)})


def test_a_named_link_starts_assignments_up_to_its_quota(client, campaign):
    link = invitation_link_create(campaign=campaign, name="Lab members", quota=1)
    assert client.get(_link_url(link)).status_code == 200
    first = client.post(_link_url(link))
    assert first.status_code == 302
    assert client.post(_link_url(link))["Location"] == first["Location"]  # the cookie resumes
    full = Client().post(_link_url(link))
    assert full.status_code == 409 and b"used up" in full.content
    # A newcomer is told before clicking Start; this browser (its cookie) may resume.
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


# --- Personal links: a worker's identity comes from a signed link, never from a name --------


def _personal_url(link, **claims) -> str:
    token = personal_link_token(
        link_id=claims.get("link_id", link.id),
        worker=claims.get("worker", link.worker.external_id),
        expires_at=claims.get("expires_at", link.expires_at),
    )
    return reverse("join-personal", kwargs={"token": token})


def _assignment_of(response) -> Assignment:
    token = response["Location"].split("/w/")[1].split("/")[0]
    return Assignment.objects.get(id=assignment_token_read(token).assignment_id)


def test_a_name_in_a_link_is_ignored_and_never_reaches_a_named_workers_work(client, campaign):
    link = personal_link_create(campaign=campaign, worker_name="ann")
    anns = _assignment_of(client.post(_personal_url(link)))
    attacker = Client()
    for url in (
        reverse("join", kwargs={"token": join_token(campaign.id)}),
        _link_url(invitation_link_create(campaign=campaign, name="Lab")),
    ):
        page = attacker.get(url + "?worker=ann")
        assert page.status_code == 200 and "a name in a link is not proof" in page.text
        entered = attacker.post(url + "?worker=ann")
        assert entered.status_code == 302
        theirs = _assignment_of(entered)
        assert theirs.id != anns.id and theirs.worker.external_id.startswith("link-")
    assert Worker.objects.filter(external_id="ann").count() == 1
    assert Assignment.objects.filter(worker__external_id="ann").get().id == anns.id


def test_a_cookie_that_holds_a_name_is_no_identity_either(client, campaign):
    """Entries through `?worker=NAME` used to leave the name in the browser's cookie."""
    link = personal_link_create(campaign=campaign, worker_name="ann")
    anns = _assignment_of(client.post(_personal_url(link)))
    cookie = COOKIE_PREFIX + str(campaign.id)
    named = get_cookie_signer(salt=cookie + COOKIE_SALT).sign("ann")
    attacker = Client()
    attacker.cookies[cookie] = named
    entered = attacker.post(reverse("join", kwargs={"token": join_token(campaign.id)}))
    assert _assignment_of(entered).id != anns.id
    assert entered.cookies[cookie].value != named  # a new anonymous id in its place


def test_a_personal_link_starts_and_resumes_its_workers_assignment(client, campaign):
    link = personal_link_create(campaign=campaign, worker_name="ann", days=7)
    url = _personal_url(link)
    page = client.get(url)
    assert page.status_code == 200 and "personal link of <strong>ann</strong>" in page.text
    first = client.post(url)
    assert first.status_code == 302 and not first.cookies  # the link is the way back
    assignment = _assignment_of(first)
    assert assignment.worker.external_id == "ann" and assignment.worker.platform == "link"
    assert client.get(first["Location"]).status_code == 200
    # The same link in another browser (ann's phone) resumes the same work.
    again = Client().post(url + "?worker=bob")
    assert again["Location"] == first["Location"]
    assert Assignment.objects.count() == 1


@pytest.mark.parametrize(
    "forge",
    [
        lambda link: "ann",  # no token at all: a name typed in
        lambda link: link_token(link.id),  # a token of another kind
        lambda link: _token_of(link)[:-3] + "xyz",  # a tampered signature
        lambda link: _with_another_workers_payload(_token_of(link), link),
        lambda link: personal_link_token(link_id=link.id, worker="bob", expires_at=link.expires_at),
        lambda link: Signer(key="not-our-key", salt=PERSONAL_LINK_SALT).sign_object(
            {"p": link.id, "w": "ann", "e": 4102444800}
        ),
    ],
    ids=["unsigned", "other-kind", "bad-signature", "edited", "other-worker", "their-key"],
)
def test_an_unsigned_or_tampered_personal_link_is_refused(client, campaign, forge):
    link = personal_link_create(campaign=campaign, worker_name="ann")
    url = reverse("join-personal", kwargs={"token": forge(link)})
    for response in (client.get(url), client.post(url)):
        assert response.status_code == 403
        assert "This link is not valid" in response.text
        assert "This link does not work" in response.text  # the worker layout's heading
    assert not Assignment.objects.exists()
    assert list(Worker.objects.values_list("external_id", flat=True)) == ["ann"]


def _token_of(link) -> str:
    return _personal_url(link).rstrip("/").rsplit("/", 1)[1]


def _with_another_workers_payload(token: str, link) -> str:
    """The token's signature under a payload that names another worker."""
    forged = signing.Signer(salt=PERSONAL_LINK_SALT).sign_object(
        {"p": link.id, "w": "mallory", "e": int(link.expires_at.timestamp())}
    )
    return forged.rsplit(":", 1)[0] + ":" + token.rsplit(":", 1)[1]


def test_an_expired_personal_link_is_refused(client, campaign):
    link = personal_link_create(campaign=campaign, worker_name="ann", days=1)
    url = _personal_url(link)
    entered = client.post(url)
    # The database says when a link ends, whatever its token says.
    yesterday = timezone.now() - timedelta(days=1)
    PersonalLink.objects.filter(pk=link.pk).update(
        created_at=yesterday, expires_at=yesterday + timedelta(hours=23)
    )
    for response in (client.get(url), client.post(url)):
        assert response.status_code == 410
        assert "This personal link has expired" in response.text and "new one" in response.text
    # So does the token: one that says it ended is refused even where the row says later.
    PersonalLink.objects.filter(pk=link.pk).update(expires_at=timezone.now() + timedelta(days=1))
    stale = _personal_url(link, expires_at=timezone.now() - timedelta(minutes=1))
    assert client.post(stale).status_code == 410
    # Pages already open keep working until the assignment ends on its own.
    assert client.get(entered["Location"]).status_code == 200


def test_a_revoked_personal_link_stops_working_and_so_do_the_pages_it_opened(client, campaign):
    link = personal_link_create(campaign=campaign, worker_name="ann")
    url = _personal_url(link)
    entered = client.post(url)
    assignment = _assignment_of(entered)
    personal_link_revoke(link=link)
    for response in (client.get(url), client.post(url)):
        assert response.status_code == 403
        assert "This personal link was withdrawn" in response.text
    stale_page = client.get(entered["Location"])
    assert stale_page.status_code == 403 and "This link is not valid" in stale_page.text
    # A new link for ann resumes her work, under a new page address.
    renewed = personal_link_create(campaign=campaign, worker_name="ann")
    resumed = client.post(_personal_url(renewed))
    assert _assignment_of(resumed).id == assignment.id
    assert resumed["Location"] != entered["Location"]
    assert client.get(resumed["Location"]).status_code == 200
    # Making that link replaced nothing but itself: one live link per worker and campaign.
    assert PersonalLink.objects.filter(revoked_at__isnull=True).get() == renewed
