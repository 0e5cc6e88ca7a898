"""The crowd block of the campaign page: owner-only, htmx fragments, clear errors."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cfannotate.crowd.models import (
    InvitationLink,
    PersonalLink,
    Platform,
    PlatformAction,
    Publication,
    Worker,
    WorkerBlock,
)
from cfannotate.crowd.services import personal_link_create
from cfannotate.labeling.assignments import assignment_start
from tests.crowd.conftest import finish
from tests.factories import make_labeling_campaign, make_user, make_worker

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


@pytest.fixture
def owner(campaign, client):
    client.force_login(campaign.owner)
    return client


def _url(name, campaign, *args):
    return reverse(name, args=[campaign.id, *args])


def test_the_block_is_the_owners_only(client, campaign):
    url = _url("crowd-platforms", campaign)
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(make_user())
    assert client.get(url).status_code == 404
    client.force_login(campaign.owner)
    fragment = client.get(url, headers=HTMX)
    assert fragment.status_code == 200 and b'id="platforms-block"' in fragment.content
    assert b"<html" not in fragment.content
    page = client.get(url)  # without htmx: a whole page
    assert b"<html" in page.content and b"Crowd platforms" in page.content
    assert client.post(url).status_code == 405


def test_the_campaign_page_loads_the_block(owner, campaign):
    page = owner.get(reverse("campaign-labeling", args=[campaign.id])).content.decode()
    assert f'hx-get="{_url("crowd-platforms", campaign)}"' in page
    assert "js/platforms.js" in page


def test_links_are_created_listed_and_closed(owner, campaign):
    response = owner.post(
        _url("crowd-link-create", campaign), {"name": "Lab", "quota": "3"}, headers=HTMX
    )
    assert response.status_code == 200 and "Created the invitation link" in response.text
    link = InvitationLink.objects.get()
    assert link.quota == 3 and "https://labels.example.org/join/link/" in response.text
    closed = owner.post(_url("crowd-link-close", campaign, link.id), headers=HTMX)
    assert closed.status_code == 200 and "closed" in closed.text
    link.refresh_from_db()
    assert not link.is_active


def test_bad_input_gets_a_400_fragment_that_says_what(owner, campaign):
    response = owner.post(
        _url("crowd-link-create", campaign), {"name": "", "quota": "-1"}, headers=HTMX
    )
    assert response.status_code == 400
    assert 'role="alert"' in response.text and "Please correct" in response.text
    assert not InvitationLink.objects.exists()


def test_publishing_on_mturk_from_the_page(owner, campaign, mturk_stub):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HITA"}})
    form = {
        "title": "Judge sentences",
        "description": "Judge edited sentences.",
        "keywords": "text",
        "reward": "1.20",
        "assignments": "4",
        "assignments_per_hit": "9",
        "assignment_minutes": "60",
        "auto_approve_days": "3",
        "lifetime_days": "7",
        "frame_height": "800",
        "sandbox": "on",
        "locale": "us",
        "min_approval_percent": "97",
        "min_approved_hits": "1000",
    }
    response = owner.post(_url("crowd-mturk-publish", campaign), form, headers=HTMX)
    assert response.status_code == 200, response.text
    assert "Published 1 HITs on the MTurk sandbox" in response.text
    publication = Publication.objects.get()
    assert publication.options["locale"] == "US" and publication.created_by == campaign.owner


def test_publishing_without_https_explains_the_setting(owner, campaign, settings, mturk_stub):
    settings.CROWD_PUBLIC_URL = ""
    form = {"title": "t", "description": "d", "reward": "1", "assignments": "1",
            "assignments_per_hit": "9", "assignment_minutes": "60", "auto_approve_days": "3",
            "lifetime_days": "7", "frame_height": "0"}  # fmt: skip
    response = owner.post(_url("crowd-mturk-publish", campaign), form, headers=HTMX)
    assert response.status_code == 400 and "CFANNOTATE_PUBLIC_URL" in response.text


def test_a_prolific_study_from_the_page(owner, campaign, prolific):
    form = {"name": "Study", "description": "Judge", "places": "3", "reward_cents": "100",
            "minutes": "10"}  # fmt: skip
    response = owner.post(_url("crowd-prolific-study", campaign), form, headers=HTMX)
    assert response.status_code == 200 and "Created draft study" in response.text
    assert Publication.objects.get().platform == Platform.PROLIFIC


def test_review_buttons_for_link_workers(owner, campaign):
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    page = owner.get(_url("crowd-platforms", campaign), headers=HTMX).text
    assert f'id="assignment-{assignment.id}"' in page and 'name="unique_token"' in page
    approve = owner.post(_url("crowd-approve", campaign, assignment.id), headers=HTMX)
    assert approve.status_code == 200 and f"Approved assignment {assignment.id}" in approve.text
    bonus = {"amount": "0.50", "reason": "Good", "unique_token": "form-token-1"}
    for _ in range(2):  # a double click pays once
        paid = owner.post(_url("crowd-bonus", campaign, assignment.id), bonus, headers=HTMX)
        assert paid.status_code == 200
    assert PlatformAction.objects.filter(action="bonus").count() == 1
    blocked = owner.post(
        _url("crowd-block", campaign, assignment.worker_id), {"reason": "Spam"}, headers=HTMX
    )
    assert blocked.status_code == 200 and "Blocked worker" in blocked.text
    assert "from all your campaigns" in blocked.text
    assert "blocked from your campaigns" in blocked.text
    # A researcher's block is theirs: the worker stays active for everyone else.
    assert Worker.objects.get(pk=assignment.worker_id).status == "active"
    assert WorkerBlock.objects.get(worker_id=assignment.worker_id).scope == "researcher"


def test_review_errors_are_fragments_with_their_status(owner, campaign):
    in_progress = assignment_start(campaign=campaign, worker=make_worker())
    conflict = owner.post(_url("crowd-approve", campaign, in_progress.id), headers=HTMX)
    assert conflict.status_code == 409 and "only submitted work" in conflict.text
    missing = owner.post(_url("crowd-reject", campaign, in_progress.id), {}, headers=HTMX)
    assert missing.status_code == 400 and "Feedback" in missing.text
    other = make_labeling_campaign(units=2)
    elsewhere = finish(assignment_start(campaign=other, worker=make_worker()))
    foreign = owner.post(_url("crowd-approve", campaign, elsewhere.id), headers=HTMX)
    assert foreign.status_code == 404 and "No assignment" in foreign.text
    stranger = owner.post(
        _url("crowd-block", campaign, elsewhere.worker_id), {"reason": "x"}, headers=HTMX
    )
    assert stranger.status_code == 404
    assert not PlatformAction.objects.exists()


def test_sync_from_the_page_reports_what_it_found(owner, campaign, prolific):
    Publication.objects.create(
        campaign=campaign, platform=Platform.PROLIFIC, external_id="s" * 24, options={}
    )
    prolific.studies["s" * 24] = {"id": "s" * 24, "status": "ACTIVE"}
    response = owner.post(_url("crowd-sync", campaign), headers=HTMX)
    assert response.status_code == 200
    assert "Status synced: 1 study or HIT refreshed, 0 submissions checked." in response.text


def test_personal_links_are_made_listed_and_revoked_from_the_page(owner, campaign):
    created = owner.post(
        _url("crowd-personal-link-create", campaign), {"worker": "ann", "days": "14"}, headers=HTMX
    )
    assert created.status_code == 200 and "Created a personal link for ann" in created.text
    link = PersonalLink.objects.get()
    assert (link.worker.external_id, link.created_by) == ("ann", campaign.owner)
    assert timedelta(days=13) < link.expires_at - timezone.now() <= timedelta(days=14)
    url = re.search(r'value="(https://labels.example.org/join/personal/[^"]+)"', created.text)
    path = url.group(1).removeprefix("https://labels.example.org")
    worker = Client()
    assert worker.post(path).status_code == 302
    revoked = owner.post(_url("crowd-personal-link-revoke", campaign, link.id), headers=HTMX)
    assert revoked.status_code == 200 and "Revoked the personal link of ann" in revoked.text
    assert "/join/personal/" not in revoked.text  # a revoked link is no longer shown
    assert worker.post(path).status_code == 403


def test_personal_links_are_the_owners_only_and_refuse_bad_input(owner, campaign):
    bad = [({"worker": "link-abcdefghijklmnop", "days": "3"}, "kept for anonymous"),
           ({"worker": "ann", "days": "400"}, "Please correct"),
           ({"worker": "", "days": "3"}, "Please correct")]  # fmt: skip
    for form, message in bad:
        response = owner.post(_url("crowd-personal-link-create", campaign), form, headers=HTMX)
        assert response.status_code == 400 and message in response.text
    assert not PersonalLink.objects.exists()
    link = personal_link_create(campaign=campaign, worker_name="ann")
    stranger = Client()
    stranger.force_login(make_user())
    for url in (
        _url("crowd-personal-link-create", campaign),
        _url("crowd-personal-link-revoke", campaign, link.id),
    ):
        assert stranger.post(url, {"worker": "eve", "days": "3"}).status_code == 404
    elsewhere = make_labeling_campaign(units=1)
    other_campaigns = personal_link_create(campaign=elsewhere, worker_name="ann")
    missing = owner.post(_url("crowd-personal-link-revoke", campaign, other_campaigns.id))
    assert missing.status_code == 404 and "No personal link" in missing.text
    assert not PersonalLink.objects.filter(revoked_at__isnull=False).exists()


PROLIFIC_FORM = {"name": "Study", "description": "Judge", "places": "900", "reward_cents": "10",
                 "minutes": "10"}  # fmt: skip
MTURK_FORM = {"title": "Judge sentences", "description": "Judge edited sentences.",
              "keywords": "text", "reward": "1.20", "assignments": "4",
              "assignments_per_hit": "9", "assignment_minutes": "60", "auto_approve_days": "3",
              "lifetime_days": "7", "frame_height": "800", "sandbox": "on", "locale": "us",
              "min_approval_percent": "97", "min_approved_hits": "1000"}  # fmt: skip


def _alert(html):
    return re.search(r'<div class="error" role="alert" id="platform-error">(.*?)</div>', html, re.S)


def test_a_prolific_400_is_said_in_the_page_in_words_with_what_to_fix(owner, campaign, prolific):
    prolific.refuse["studies"] = (
        400,
        {
            "error": {
                "status": 400,
                "title": "Bad Request",
                "detail": {
                    "reward": ["Reward is below the minimum pay of 6.00 GBP per hour"],
                    "total_available_places": ["Ensure this value is at most 500."],
                },
            }
        },
    )
    url = _url("crowd-prolific-study", campaign)
    response = owner.post(url, PROLIFIC_FORM, headers=HTMX)
    assert response.status_code == 502
    assert "<html" not in response.text and 'id="platforms-block"' in response.text
    alert = _alert(response.text).group(1)
    assert "reward: Reward is below the minimum pay of 6.00 GBP per hour." in alert
    assert "total_available_places: Ensure this value is at most 500." in alert
    assert "{" not in alert and "[" not in alert  # words, not a Python dict
    assert "What to fix:</strong> Change Reward (cents or pence), Places in" in alert
    assert Publication.objects.get().status == "failed"
    # Without htmx the whole page comes back, styled, with the same words.
    prolific.refuse["studies"] = (500, {"error": {"detail": "Internal error"}})
    page = owner.post(url, PROLIFIC_FORM)
    assert page.status_code == 502 and "<html" in page.text and "css/cfannotate.css" in page.text
    alert = _alert(page.text).group(1)
    assert "Internal error." in alert and "Prolific had a problem on its side" in alert


def test_an_unconfigured_prolific_says_which_setting_to_set(owner, campaign, settings):
    settings.CROWD_PROLIFIC_TOKEN = ""
    response = owner.post(_url("crowd-prolific-study", campaign), PROLIFIC_FORM, headers=HTMX)
    assert response.status_code == 502
    alert = _alert(response.text).group(1)
    assert "CFANNOTATE_PROLIFIC_TOKEN is not set" in alert and "API tokens" in alert


def test_an_mturk_sandbox_error_is_said_in_the_page_with_what_to_fix(owner, campaign, mturk_stub):
    mturk_stub.add_client_error(
        "create_hit_type",
        service_error_code="RequestError",
        service_message="Your AWS account must be linked to your MTurk requester account.",
        http_status_code=400,
    )
    response = owner.post(_url("crowd-mturk-publish", campaign), MTURK_FORM, headers=HTMX)
    assert response.status_code == 502
    alert = _alert(response.text).group(1)
    assert "MTurk refused CreateHITType: Your AWS account must be linked" in alert
    assert "What to fix:" in alert and "requestersandbox.mturk.com" in alert
    assert PlatformAction.objects.get(action="publish").outcome == "failed"


def test_an_unexpected_platform_answer_is_an_error_in_the_page_not_a_crash(
    owner, campaign, mturk_stub
):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {}})  # no HITId
    response = owner.post(_url("crowd-mturk-publish", campaign), MTURK_FORM, headers=HTMX)
    assert response.status_code == 502
    alert = _alert(response.text).group(1)
    assert "answered in a way cfannotate did not expect (KeyError)" in alert
    assert "Sync the status" in alert


def test_platform_error_text_is_escaped(owner, campaign, mturk_stub):
    mturk_stub.add_client_error(
        "create_hit_type",
        service_error_code="RequestError",
        service_message="<script>alert(1)</script>",
        http_status_code=400,
    )
    response = owner.post(_url("crowd-mturk-publish", campaign), MTURK_FORM, headers=HTMX)
    assert "<script>alert(1)</script>" not in response.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text


def test_error_pages_and_the_platforms_page_are_styled_and_keep_whole_pages_out_of_blocks(
    owner, campaign
):
    missing = owner.get("/campaigns/999999/platforms/")
    assert missing.status_code == 404 and "css/cfannotate.css" in missing.text
    assert "request_errors.js" in missing.text
    page = owner.get(_url("crowd-platforms", campaign))
    assert "js/platforms.js" in page.text  # 5xx fragments swap on the standalone page too


def _form_field(html: str, field_id: str) -> str:
    """The opening tag of one input or textarea of a fragment, by id."""
    return re.search(rf'<(?:input|textarea)[^>]*id="{field_id}"[^>]*>[^<]*', html).group(0)


def test_a_refused_study_keeps_what_was_typed_open_in_its_form(owner, campaign, prolific):
    prolific.refuse["studies"] = (400, {"error": {"detail": {"reward": ["Too low."]}}})
    url = _url("crowd-prolific-study", campaign)
    typed = {**PROLIFIC_FORM, "description": "Judge <b>edited</b> sentences."}
    html = owner.post(url, typed, headers=HTMX).text
    assert "reward: Too low." in _alert(html).group(1)
    assert "<details open>\n    <summary>Create a Prolific draft study" in html
    assert "Judge &lt;b&gt;edited&lt;/b&gt; sentences." in _form_field(html, "prolific_description")
    assert f'value="{PROLIFIC_FORM["reward_cents"]}"' in _form_field(html, "prolific_reward_cents")
    # A field the form refuses is said beside the field, the rest still there.
    html = owner.post(url, {**typed, "minutes": "0"}, headers=HTMX).text
    assert "Ensure this value is greater than or equal to 1." in html
    assert f'value="{PROLIFIC_FORM["places"]}"' in _form_field(html, "prolific_places")
    # Created: the form starts afresh, closed.
    html = owner.post(url, typed, headers=HTMX).text
    assert "Created draft study" in html and "<details open>" not in html
    assert "Judge &lt;b&gt;" not in html


def test_a_refused_row_action_keeps_its_words_in_that_row_only(owner, campaign):
    first = finish(assignment_start(campaign=campaign, worker=make_worker()))
    second = finish(assignment_start(campaign=campaign, worker=make_worker()))
    long_feedback = "Your answers <did not> match the instructions. " * 25  # over 1024
    refused = owner.post(
        _url("crowd-reject", campaign, first.id), {"feedback": long_feedback}, headers=HTMX
    )
    assert refused.status_code == 400 and "at most 1024 characters" in refused.text
    html = refused.text
    field = 'aria-label="Rejection feedback for assignment {}"'
    kept = re.search(field.format(first.id) + r' value="([^"]*)"', html)
    assert kept and kept.group(1) == long_feedback.replace("<", "&lt;").replace(">", "&gt;")
    assert field.format(second.id) + ">" in html  # the other row is empty
    bonus = {"amount": "-1", "reason": "Careful work", "unique_token": "t-1"}
    html = owner.post(_url("crowd-bonus", campaign, second.id), bonus, headers=HTMX).text
    assert f'Bonus amount for assignment {second.id}" value="-1"' in html
    assert f'Bonus reason for assignment {second.id}" value="Careful work"' in html
    blocked = {"reason": "", "scope": "campaign"}
    html = owner.post(_url("crowd-block", campaign, second.worker_id), blocked, headers=HTMX).text
    assert f'Block reason for worker {second.worker.external_id}" value=""' in html
    row = html[html.index(f'id="assignment-{second.id}"') :]
    assert '<option value="campaign" selected>' in row[: row.index("</tr>")]


def _flashed(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_plain_post_that_worked_redirects_so_a_reload_does_not_post_again(owner, campaign):
    """Without JavaScript the forms post plainly: done, the browser is sent (303) to a page
    it can reload, with the message flashed there, not left on the POST-only URL."""
    labeling = _url("campaign-labeling", campaign)
    created = owner.post(_url("crowd-link-create", campaign), {"name": "Lab", "quota": "3"})
    assert created.status_code == 303 and created["Location"] == labeling
    assert InvitationLink.objects.count() == 1
    page = owner.get(created["Location"])
    assert page.status_code == 200 and _flashed(page) == ["Created the invitation link 'Lab'."]
    # Posted from the crowd platforms page (what a browser without JavaScript opens): back there.
    platforms = f"http://testserver{_url('crowd-platforms', campaign)}"
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    approved = owner.post(_url("crowd-approve", campaign, assignment.id), HTTP_REFERER=platforms)
    assert approved.status_code == 303 and approved["Location"] == _url("crowd-platforms", campaign)
    page = owner.get(approved["Location"])
    assert f"Approved assignment {assignment.id}." in page.text
    # Another site's Referer is not followed.
    blocked = owner.post(
        _url("crowd-block", campaign, assignment.worker_id),
        {"reason": "Spam"},
        HTTP_REFERER="https://elsewhere.example/",
    )
    assert blocked.status_code == 303 and blocked["Location"] == labeling


def test_a_plain_sync_flashes_its_problems_too(owner, campaign, prolific, monkeypatch):
    from cfannotate.crowd import campaign_views

    class Report:
        problems = ["Study s1 could not be read: <b>gone</b>."]

        def summary(self):
            return "nothing refreshed."

    monkeypatch.setattr(campaign_views, "platform_sync", lambda *, campaign: Report())
    synced = owner.post(_url("crowd-sync", campaign))
    assert synced.status_code == 303
    page = owner.get(synced["Location"])
    assert _flashed(page) == [
        "Status synced: nothing refreshed.",
        "Study s1 could not be read: <b>gone</b>.",
    ]
    assert "&lt;b&gt;gone&lt;/b&gt;" in page.text and "<b>gone</b>" not in page.text


def test_a_plain_post_that_was_refused_stays_in_the_page_with_what_was_typed(owner, campaign):
    refused = owner.post(_url("crowd-link-create", campaign), {"name": "Lab <1>", "quota": "-1"})
    assert refused.status_code == 400 and "<html" in refused.text
    assert "Please correct" in refused.text and 'value="Lab &lt;1&gt;"' in refused.text
    assert not InvitationLink.objects.exists()


def _queue_row(html: str, assignment) -> str:
    row = html[html.index(f'id="assignment-{assignment.id}"') :]
    return row[: row.index("</tr>")]


def test_the_review_queue_offers_only_what_the_server_would_do(owner, campaign):
    """Undecided: approve, reject, bonus, block. Approved: no second approval and no
    rejection (an approval cannot be undone). Rejected: an approval may still override it
    (not on Prolific), a second rejection would do nothing."""
    from cfannotate.crowd.services import assignment_review_record

    undecided, approved, rejected = (
        finish(assignment_start(campaign=campaign, worker=make_worker())) for _ in range(3)
    )
    assert owner.post(_url("crowd-approve", campaign, approved.id), headers=HTMX).status_code == 200
    assignment_review_record(assignment=rejected, decision="rejected", feedback="No.")
    html = owner.get(_url("crowd-platforms", campaign), headers=HTMX).text

    def offered(assignment) -> set[str]:
        row = _queue_row(html, assignment)
        names = {"approve", "reject", "bonus", "block"}
        return {name for name in names if f"/{name}/" in row}

    assert offered(undecided) == {"approve", "reject", "bonus", "block"}
    assert offered(approved) == {"bonus", "block"}
    assert offered(rejected) == {"approve", "bonus", "block"}
    Worker.objects.filter(pk=rejected.worker_id).update(platform=Platform.PROLIFIC)
    html = owner.get(_url("crowd-platforms", campaign), headers=HTMX).text
    assert offered(rejected) == {"bonus", "block"}  # Prolific keeps a rejection
    # The hidden reject was one the server refuses.
    refused = owner.post(
        _url("crowd-reject", campaign, approved.id), {"feedback": "Late."}, headers=HTMX
    )
    assert refused.status_code == 409 and "an approval cannot be undone" in refused.text
