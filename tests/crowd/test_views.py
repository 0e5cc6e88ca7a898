"""Worker entry pages: the campaign's link, named links with quotas, personal links."""

from datetime import timedelta

import pytest
from django.core import signing
from django.core.signing import Signer, get_cookie_signer
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.worker_tokens import (
    PERSONAL_LINK_SALT,
    assignment_token_read,
    join_token,
    link_token,
    personal_link_token,
    resume_code,
    worker_token,
)
from cfannotate.crowd.models import PersonalLink, Worker
from cfannotate.crowd.services import (
    invitation_link_close,
    invitation_link_create,
    personal_link_create,
    personal_link_revoke,
)
from cfannotate.crowd.views import COOKIE_PREFIX, COOKIE_SALT
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import Assignment, AssignmentState, LabelingUnit, Round
from tests.factories import make_worker

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


# --- What the entry page tells a worker: rounds, time, pay ------------------------------------


def _join_url(campaign) -> str:
    return reverse("join", kwargs={"token": join_token(campaign.id)})


def _visible_text(response) -> str:
    """The page's text without tags, for checking the messages a worker reads."""
    import html
    import re

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def _rounds_taking(seconds: int, assignments: int) -> None:
    """Start `assignments` link assignments and mark all their rounds done in `seconds` each."""
    for _ in range(assignments):
        Client().post(_join_url(Campaign.objects.get()))
    served = timezone.now() - timedelta(hours=1)
    Round.objects.update(served_at=served, submitted_at=served + timedelta(seconds=seconds))


def test_the_entry_page_gives_rounds_and_no_pay_or_time_it_cannot_know(client, campaign):
    page = _visible_text(client.get(_join_url(campaign)))
    # 1 training round, 2 rounds and 1 hidden gold round: the worker sees 4, never "gold".
    assert "4 rounds" in page and "gold" not in page.lower()
    assert "minute" not in page and "Pay" not in page  # nothing to go by, nothing invented
    assert ".." not in page


def test_the_entry_page_counts_the_rounds_a_worker_starting_now_is_given(client, campaign):
    # 4 units, 2 a worker: 1 training + 2 real + 1 gold while two or more units are open.
    assert "4 rounds" in _visible_text(client.get(_join_url(campaign)))
    units = list(LabelingUnit.objects.filter(campaign=campaign).order_by("id"))
    LabelingUnit.objects.filter(pk__in=[u.pk for u in units[:3]]).update(
        claims=F("judgments_needed")
    )
    page = _visible_text(client.get(_join_url(campaign)))
    assert "3 rounds" in page  # the last open unit: one real round, not the two promised
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    assert assignment.rounds.count() == 3  # what the page said
    # Nothing open: the campaign's numbers, and starting explains there is no work.
    LabelingUnit.objects.filter(campaign=campaign).update(claims=F("judgments_needed"))
    assert "4 rounds" in _visible_text(client.get(_join_url(campaign)))


def _fully_judged(campaign) -> None:
    LabelingUnit.objects.filter(campaign=campaign).update(
        claims=F("judgments_needed"), completed=F("judgments_needed")
    )


def test_the_entry_page_says_when_the_task_has_no_work_left_instead_of_start(client, campaign):
    """Every unit fully judged: no rounds, minutes or Start to click, only why; Start would
    have said the same after the click. The worker who holds rounds can still go on."""
    holder = Client()
    assert holder.post(_join_url(campaign)).status_code == 302
    _fully_judged(campaign)
    response = client.get(_join_url(campaign))
    page = _visible_text(response)
    assert response.status_code == 200
    assert "There is no work left in this task for you. Thank you for your help!" in page
    assert "There is no need to come back" in page
    assert "rounds" not in page and ">Start<" not in response.content.decode()
    assert "Resuming? Enter your code" in page  # a worker elsewhere may still go on
    assert client.post(_join_url(campaign)).status_code == 409  # what Start would say
    held = holder.get(_join_url(campaign)).content.decode()
    assert ">Start<" in held and "data-no-work-left" not in held and "4 rounds" in held
    # A finished task says so too, to everyone but the holder.
    Campaign.objects.filter(pk=campaign.pk).update(status="finished")
    page = _visible_text(client.get(_join_url(campaign)))
    assert "This task is finished: all of its work is done." in page and "Start" not in page
    assert ">Start<" in holder.get(_join_url(campaign)).content.decode()


@pytest.mark.parametrize(
    ("status", "says"),
    [
        ("paused", "Come back later: the researcher has paused it and may open it again."),
        ("review", "Come back later: it opens once the researcher has prepared it."),
    ],
)
def test_the_entry_page_of_a_task_not_open_says_so(client, campaign, status, says):
    holder = Client()
    assert holder.post(_join_url(campaign)).status_code == 302
    Campaign.objects.filter(pk=campaign.pk).update(status=status)
    response = client.get(_join_url(campaign))
    page = _visible_text(response)
    assert "This task is not open for labeling" in page and says in page
    assert ">Start<" not in response.content.decode() and "rounds" not in page
    assert client.post(_join_url(campaign)).status_code == 409  # what Start would say
    assert ">Start<" in holder.get(_join_url(campaign)).content.decode()  # resumes
    Campaign.objects.filter(pk=campaign.pk).update(status="labeling")
    assert ">Start<" in client.get(_join_url(campaign)).content.decode()  # open again


def test_a_personal_link_and_a_preview_say_there_is_no_work_left(client, campaign):
    from tests.crowd.conftest import entry_path, make_mturk_publication

    link = personal_link_create(campaign=campaign, worker_name="ann", days=3)
    _fully_judged(campaign)
    page = client.get(_personal_url(link)).content.decode()
    assert "There is no work left in this task" in page and ">Start<" not in page
    mturk = make_mturk_publication(campaign)
    preview = client.get(entry_path(mturk, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE"))
    assert "There is no work left in this task" in _visible_text(preview)
    assert 'class="session-facts"' not in preview.content.decode()  # no rounds to promise


def test_the_entry_page_names_what_is_edited_without_inventing_a_plural(client, campaign):
    Campaign.objects.filter(pk=campaign.pk).update(text_name="Hypothesis")
    page = _visible_text(client.get(_join_url(campaign)))
    assert "edited versions of the hypothesis shown in each round" in page
    assert "hypothesiss" not in page


def test_the_entry_page_estimates_time_from_past_rounds(client, campaign):
    _rounds_taking(seconds=60, assignments=2)  # 8 rounds, enough to go by
    page = _visible_text(client.get(_join_url(campaign)))
    assert "About 4 minutes in all, going by how long other workers took." in page
    assert "Pay" not in page  # an invitation link states no pay


def test_a_platform_preview_states_its_pay_and_time(client, campaign):
    from tests.crowd.conftest import entry_path, make_mturk_publication, make_prolific_publication

    mturk = make_mturk_publication(campaign)
    mturk.options = {"reward": "1.20"}
    mturk.save()
    preview = client.get(entry_path(mturk, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE"))
    page = _visible_text(preview)
    assert "Pay: US$1.20 for the whole assignment." in page
    assert "minute" not in page  # MTurk's time allotted is a limit, not an estimate

    prolific = make_prolific_publication(campaign)
    prolific.options = {"places": 5, "reward_cents": 250, "minutes": 12}
    prolific.save()
    page = _visible_text(client.get(entry_path(prolific)))
    assert "Pay: 2.50 in the study's currency for the whole assignment." in page
    assert "About 12 minutes in all." in page and "4 rounds" in page and ".." not in page


# --- Resuming with a code ----------------------------------------------------------------------


def _started(campaign) -> tuple[Client, Assignment]:
    first = Client()
    response = first.post(_join_url(campaign))
    return first, _assignment_of(response)


def test_a_resume_code_on_another_device_leads_back_to_the_round(client, campaign):
    _, assignment = _started(campaign)
    code = resume_code(assignment)
    start = reverse("worker-start", kwargs={"token": worker_token(assignment)})
    # The worker's pages show the code.
    assert code in client.get(start).content.decode()
    # Typed by hand on another device: spaces and lower case are fine.
    other = Client(enforce_csrf_checks=True)
    page = other.get(_join_url(campaign))
    csrf = page.cookies["csrftoken"].value
    typed = f" {code.lower()} "
    response = other.post(_join_url(campaign), {"code": typed, "csrfmiddlewaretoken": csrf})
    assert response.status_code == 302 and response["Location"] == start
    # That browser now comes back to the same worker by the link's Start button too.
    assert _assignment_of(other.post(_join_url(campaign), {"csrfmiddlewaretoken": csrf})) == (
        assignment
    )
    assert Assignment.objects.count() == 1
    # Without the CSRF token the form is refused.
    assert (
        Client(enforce_csrf_checks=True).post(_join_url(campaign), {"code": code}).status_code
        == 403
    )


@pytest.mark.parametrize("wrong", ["", "nonsense", "1-AAAAAAAAAA", "<b>x</b>"])
def test_a_wrong_resume_code_shows_the_page_again_with_the_reason(client, campaign, wrong):
    _started(campaign)
    response = client.post(_join_url(campaign), {"code": wrong})
    assert response.status_code == 400
    page = response.content.decode()
    assert "No task of yours has this code here." in page
    assert 'aria-invalid="true"' in page and "<b>x</b>" not in page  # kept, escaped
    if wrong == "<b>x</b>":
        assert 'value="&lt;b&gt;x&lt;/b&gt;"' in page
    assert ".." not in _visible_text(response)
    assert COOKIE_PREFIX + str(campaign.id) not in response.cookies


def test_a_resume_code_of_an_ended_or_named_assignment_is_refused(client, campaign):
    _, assignment = _started(campaign)
    code = resume_code(assignment)
    Assignment.objects.filter(pk=assignment.pk).update(state=AssignmentState.EXPIRED)
    response = client.post(_join_url(campaign), {"code": code})
    assert response.status_code == 400 and b"This assignment expired after" in response.content

    # A named worker comes back by their personal link: no code shows, none is taken,
    # so revoking the link leaves nothing that still opens the work.
    link = personal_link_create(campaign=campaign, worker_name="alice")
    named = _assignment_of(client.post(_personal_url(link)))
    start = reverse("worker-start", kwargs={"token": worker_token(named)})
    assert b"resume code" not in client.get(start).content.lower()
    assert client.post(_join_url(campaign), {"code": resume_code(named)}).status_code == 400


def test_wrong_resume_codes_are_rate_limited(client, campaign, settings):
    from django.core.cache import cache

    cache.clear()
    settings.TOKEN_FAILURE_RATE = "2/15m"
    _, assignment = _started(campaign)
    for _ in range(2):
        assert client.post(_join_url(campaign), {"code": "1-AAAAAAAAAA"}).status_code == 400
    # Past the limit even the right code waits, and the page says for how long.
    response = client.post(_join_url(campaign), {"code": resume_code(assignment)})
    assert response.status_code == 429
    assert b"Too many wrong codes from your connection; try again in 15 minutes." in (
        response.content
    )
    cache.clear()


def test_a_used_up_link_still_offers_the_resume_box(client, campaign):
    link = invitation_link_create(campaign=campaign, name="Lab", quota=1)
    first = Client()
    assignment = _assignment_of(first.post(_link_url(link)))
    page = client.get(_link_url(link))
    assert page.status_code == 409 and b"used up" in page.content
    assert b"Resuming? Enter your code" in page.content and b">Start<" not in page.content
    response = client.post(_link_url(link), {"code": resume_code(assignment)})
    assert response.status_code == 302
