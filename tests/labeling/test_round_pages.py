"""The worker's round pages (`cfannotate/crowd/round_views.py`) over labeling's assignments."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from cfannotate.core.worker_tokens import assignment_token, form_token, join_token
from cfannotate.labeling.models import Assignment, AssignmentState, Judgment, RoundKind
from tests.factories import make_labeling_campaign

pytestmark = pytest.mark.django_db


def _token(assignment):
    return assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)


def _round_url(assignment, position, suffix=""):
    url = reverse("worker-round", kwargs={"token": _token(assignment), "position": position})
    return url + suffix


def _complete_form(assignment, items=3, valid="valid", label="positive"):
    data = {"form_token": form_token(assignment.token_nonce)}
    for index in range(1, items + 1):
        data[f"valid-{index}"] = valid
        data[f"label-{index}"] = label
    return data


def test_a_tampered_token_gets_a_clear_403(client, assignment):
    token = _token(assignment)
    response = client.get(reverse("worker-start", kwargs={"token": token[:-2] + "xx"}))
    assert response.status_code == 403
    assert b"This link is not valid" in response.content


def test_first_visit_shows_instructions_then_the_round(client, assignment):
    response = client.get(reverse("worker-start", kwargs={"token": _token(assignment)}))
    assert response.status_code == 200
    assert b"Instructions" in response.content and b"Keyboard shortcuts" in response.content
    round_page = client.get(_round_url(assignment, 1))
    assert round_page.status_code == 200
    assert b"Training round" in round_page.content
    assert round_page["Cache-Control"].startswith("max-age=0")


def test_round_pages_count_k_of_n_and_link_the_instructions(client, assignment):
    _submit_training(client, assignment)
    page = client.get(_round_url(assignment, 2)).content.decode()
    assert "Round 1 of 4" in page
    assert reverse("worker-instructions", kwargs={"token": _token(assignment)}) in page


def _submit_training(client, assignment):
    client.get(_round_url(assignment, 1))
    return client.post(_round_url(assignment, 1, "submit/"), _complete_form(assignment))


def test_training_submit_shows_feedback_then_continues(client, assignment):
    response = _submit_training(client, assignment)
    assert response.status_code == 302 and response["Location"] == _round_url(assignment, 1)
    feedback = client.get(response["Location"]).content.decode()
    assert "expected answers" in feedback and "Known answer 1" in feedback
    assert _round_url(assignment, 2) in feedback
    # The sentence the edits were of, with its label, as the round showed it.
    training = assignment.rounds.get(position=1).gold_round.original
    reference = re.search(r'<section class="reference".*?</section>', feedback, re.S)
    assert reference and training.text in reference[0]
    assert training.label.display_name in reference[0]
    # An NLI worker reads the premise too: what the explanations speak of.
    type(training).objects.filter(pk=training.pk).update(context="Two dogs run on a beach.")
    type(assignment.campaign).objects.filter(pk=assignment.campaign_id).update(
        context_name="Premise"
    )
    again = client.get(response["Location"]).content.decode()
    reference = re.search(r'<section class="reference".*?</section>', again, re.S)
    assert "Premise</span> Two dogs run on a beach." in reference[0]


def test_a_post_without_the_form_token_is_refused(client, assignment):
    client.get(_round_url(assignment, 1))
    data = _complete_form(assignment)
    del data["form_token"]
    response = client.post(_round_url(assignment, 1, "submit/"), data)
    assert response.status_code == 403 and b"out of date" in response.content
    forged = client.post(_round_url(assignment, 1, "submit/"), {**data, "form_token": "f" * 64})
    assert forged.status_code == 403
    assert assignment.rounds.get(position=1).submitted_at is None


def test_a_click_is_saved_by_htmx_and_answered_with_a_status_fragment(client, assignment):
    client.get(_round_url(assignment, 1))
    response = client.post(
        _round_url(assignment, 1, "items/2/"),
        {"valid-2": "invalid", "label-2": "negative"},
        headers={"HX-Request": "true", "X-Worker-Form": form_token(assignment.token_nonce)},
    )
    assert response.status_code == 200
    assert 'id="status-2"' in response.content.decode() and b"Saved" in response.content
    judgments = Judgment.objects.filter(round__assignment=assignment, round__position=1)
    saved = [(j.is_valid, j.label.value if j.label else None) for j in judgments.order_by("id")]
    assert saved[1] == (False, "negative") and saved[0] == (None, None)
    # The reloaded page shows the choice again.
    page = client.get(_round_url(assignment, 1)).content.decode()
    assert re.search(r'name="valid-2" value="invalid"[^>]*checked', page)


def test_bad_click_values_get_400_and_save_nothing(client, assignment):
    client.get(_round_url(assignment, 1))
    headers = {"X-Worker-Form": form_token(assignment.token_nonce)}
    for data, index in (
        ({"valid-1": "maybe"}, 1),
        ({"label-1": "gold"}, 1),
        ({}, 1),
        ({"valid-9": "valid"}, 9),
    ):
        response = client.post(_round_url(assignment, 1, f"items/{index}/"), data, headers=headers)
        assert response.status_code == 400, data
    assert not Judgment.objects.filter(
        round__assignment=assignment, is_valid__isnull=False
    ).exists()


def test_an_incomplete_submit_shows_the_round_again_with_what_is_missing(client, assignment):
    client.get(_round_url(assignment, 1))
    data = _complete_form(assignment)
    del data["label-3"]
    response = client.post(_round_url(assignment, 1, "submit/"), data)
    assert response.status_code == 400
    page = response.content.decode()
    assert "Answer every counterfactual" in page and "cf-missing" in page
    assert re.search(r'name="valid-3" value="valid"[^>]*checked', page)  # nothing lost
    # In words, not only in red: which version lacks what, tied to the question lacking it.
    assert "edited version 3 still needs an answer" in page
    assert '<p class="cf-missing-note" id="missing-3" data-missing-note>Choose a label.</p>' in page
    assert (
        'aria-label="Label of edited version 3" data-group="label" aria-invalid="true" '
        'aria-describedby="missing-3">' in page
    )
    assert 'aria-label="Is edited version 3 valid?" data-group="valid">' in page
    assert page.count('aria-invalid="true"') == 1


def test_each_labels_description_is_read_with_its_choice(client, assignment):
    label = assignment.campaign.labels.get(value="positive")
    label.description = "The review likes the film."
    label.save()
    page = client.get(_round_url(assignment, 1)).content.decode()
    assert f'<span id="label-help-{label.id}">The review likes the film.</span>' in page
    assert page.count(f'aria-describedby="label-help-{label.id}"') == 3  # one per version


def test_double_submit_and_out_of_order_posts(client, assignment):
    first = _submit_training(client, assignment)
    second = client.post(_round_url(assignment, 1, "submit/"), _complete_form(assignment))
    assert second.status_code == 302 and second["Location"] == first["Location"]
    ahead = client.post(_round_url(assignment, 4, "submit/"), _complete_form(assignment))
    assert ahead.status_code == 409 and b"comes later" in ahead.content
    # A GET of a later round just leads back to the current one.
    assert client.get(_round_url(assignment, 4))["Location"] == _round_url(assignment, 2)


HTMX = {"HX-Request": "true"}


def test_an_htmx_submit_answers_with_the_next_round_already_served(client, assignment):
    _submit_training(client, assignment)
    client.get(_round_url(assignment, 2))
    response = client.post(
        _round_url(assignment, 2, "submit/"), _complete_form(assignment), headers=HTMX
    )
    assert response.status_code == 200
    assert response["HX-Push-Url"] == _round_url(assignment, 3)
    fragment = response.content.decode()
    # What htmx swaps into <main>: the next round and its title, not a whole page.
    assert fragment.startswith("<title>Round 2 of 4") and "<html" not in fragment
    assert 'id="round-form"' in fragment and _round_url(assignment, 3, "submit/") in fragment
    submitted, served = assignment.rounds.get(position=2), assignment.rounds.get(position=3)
    assert submitted.submitted_at is not None
    assert served.served_at is not None and served.submitted_at is None
    assert served.judgments.count() == 3  # its clock started, as a page load starts it
    # The swapped-in round is the current one: a click on it saves, a reload shows it.
    saved = client.post(
        _round_url(assignment, 3, "items/1/"),
        {"valid-1": "valid"},
        headers={**HTMX, "X-Worker-Form": form_token(assignment.token_nonce)},
    )
    assert saved.status_code == 200
    assert client.get(_round_url(assignment, 3)).status_code == 200
    assert assignment.rounds.get(position=3).served_at == served.served_at


def test_an_htmx_submit_loads_feedback_and_the_completion_page_as_whole_pages(client, assignment):
    client.get(_round_url(assignment, 1))
    training = client.post(
        _round_url(assignment, 1, "submit/"), _complete_form(assignment), headers=HTMX
    )
    assert training.status_code == 200 and training["HX-Redirect"] == _round_url(assignment, 1)
    assert assignment.rounds.get(position=2).served_at is None  # feedback comes first
    replay = client.post(
        _round_url(assignment, 1, "submit/"), _complete_form(assignment), headers=HTMX
    )
    assert replay["HX-Redirect"] == training["HX-Redirect"]  # a replay serves nothing
    client.get(_round_url(assignment, 2))
    for round_ in assignment.rounds.exclude(kind=RoundKind.TRAINING).order_by("position"):
        response = client.post(
            _round_url(assignment, round_.position, "submit/"),
            _complete_form(assignment),
            headers=HTMX,
        )
    assert response["HX-Redirect"] == reverse("worker-done", kwargs={"token": _token(assignment)})
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED


def test_an_incomplete_htmx_submit_swaps_the_round_back_with_what_is_missing(client, assignment):
    client.get(_round_url(assignment, 1))
    data = _complete_form(assignment)
    del data["valid-2"]
    response = client.post(_round_url(assignment, 1, "submit/"), data, headers=HTMX)
    assert response.status_code == 400 and "HX-Push-Url" not in response
    fragment = response.content.decode()
    assert fragment.startswith("<title>") and "<html" not in fragment
    assert "Answer every counterfactual" in fragment and "cf-missing" in fragment
    assert re.search(r'name="label-2" value="positive"[^>]*checked', fragment)
    assert assignment.rounds.get(position=2).served_at is None


def test_gold_rounds_swapped_in_by_htmx_leak_no_answers_either(client, assignment_gold_last):
    """Round 2 always opens by a page load (training feedback comes first), so the gold
    round is placed after the real ones: both kinds then arrive swapped in."""
    assignment = assignment_gold_last
    _submit_training(client, assignment)
    client.get(_round_url(assignment, 2))
    fragments = {}
    for round_ in assignment.rounds.exclude(kind=RoundKind.TRAINING).order_by("position"):
        response = client.post(
            _round_url(assignment, round_.position, "submit/"),
            _complete_form(assignment),
            headers=HTMX,
        )
        if "HX-Push-Url" in response:
            following = assignment.rounds.get(position=round_.position + 1)
            fragments[following.kind] = response.content.decode()
    gold, real = fragments[RoundKind.GOLD], fragments[RoundKind.REAL]
    assert "gold" not in gold.lower() and "Known answer" not in gold and "expected" not in gold
    assert _skeleton(gold) == _skeleton(real)


def _skeleton(html):
    """The markup without texts or numbers."""
    html = re.sub(r"<p class=\"cf-text\">.*?</p>", "", html)
    html = re.sub(r'<span class="reference-text">.*?</span>', "", html)
    return re.sub(r"\d+", "N", html)


def test_gold_rounds_are_indistinguishable_and_leak_no_answers(client, assignment):
    _submit_training(client, assignment)
    pages = {}
    for round_ in assignment.rounds.exclude(kind=RoundKind.TRAINING).order_by("position"):
        page = client.get(_round_url(assignment, round_.position)).content.decode()
        pages[round_.kind] = page
        client.post(_round_url(assignment, round_.position, "submit/"), _complete_form(assignment))
    gold, real = pages[RoundKind.GOLD], pages[RoundKind.REAL]
    assert "gold" not in gold.lower() and "Known answer" not in gold and "expected" not in gold
    assert _skeleton(gold) == _skeleton(real)


def test_generated_text_is_escaped(client, assignment):
    round_ = assignment.rounds.filter(kind=RoundKind.REAL).first()
    candidate = round_.unit.items.first().candidate
    candidate.text = 'A <script>alert("x")</script> film.'
    candidate.save()
    _submit_training(client, assignment)
    for round_ in assignment.rounds.exclude(kind=RoundKind.TRAINING).order_by("position"):
        page = client.get(_round_url(assignment, round_.position)).content.decode()
        assert "<script>alert" not in page
        client.post(_round_url(assignment, round_.position, "submit/"), _complete_form(assignment))


def test_the_last_round_leads_to_the_completion_code(client, assignment):
    _submit_training(client, assignment)
    for round_ in assignment.rounds.exclude(kind=RoundKind.TRAINING).order_by("position"):
        client.get(_round_url(assignment, round_.position))
        response = client.post(
            _round_url(assignment, round_.position, "submit/"), _complete_form(assignment)
        )
    done_url = reverse("worker-done", kwargs={"token": _token(assignment)})
    assert response["Location"] == done_url
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED
    assert assignment.completion_code in client.get(done_url).content.decode()
    assert client.get(_round_url(assignment, 3))["Location"] == done_url


def test_worker_pages_load_nothing_from_elsewhere_and_deny_framing(client, assignment):
    response = client.get(_round_url(assignment, 1))
    page = response.content.decode()
    for url in re.findall(r'(?:src|href)="([^"]+)"', page):
        assert url.startswith("/") or url.startswith("#"), url
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert "csrftoken" not in response.cookies


def test_an_invitation_link_starts_and_then_resumes_an_assignment(client):
    campaign = make_labeling_campaign(units=4, rounds_per_assignment=2)
    url = reverse("join", kwargs={"token": join_token(campaign.id)})
    assert client.get(url).status_code == 200
    first = client.post(url)
    assert first.status_code == 302
    again = client.post(url)
    assert again["Location"] == first["Location"]
    assert Assignment.objects.filter(campaign=campaign).count() == 1
    # A name in the URL is no identity: this browser goes on as the worker it was.
    named = client.post(url + "?worker=alice")
    assert named["Location"] == first["Location"]
    assert Assignment.objects.filter(campaign=campaign).count() == 1


def test_a_bad_invitation_link_and_a_full_campaign_say_so(client):
    assert client.get(reverse("join", kwargs={"token": "nonsense"})).status_code == 403
    campaign = make_labeling_campaign(units=1, k=1)
    url = reverse("join", kwargs={"token": join_token(campaign.id)})
    assert client.post(url).status_code == 302
    full = Client().post(url)
    assert full.status_code == 409 and b"no work left" in full.content
    assert b"<h1>No work right now</h1>" in full.content


@pytest.mark.parametrize(
    ("status", "come_back"),
    [
        ("paused", "Come back later: the researcher has paused it"),
        ("finished", "There is no need to come back"),
    ],
)
def test_no_work_is_a_plain_styled_page_that_says_whether_to_come_back(client, status, come_back):
    campaign = make_labeling_campaign(units=2)
    campaign.status = status
    campaign.save()
    response = client.post(reverse("join", kwargs={"token": join_token(campaign.id)}))
    assert response.status_code == 409
    page = response.content.decode()
    assert "<title>No work right now · cfannotate</title>" in page
    assert "<h1>No work right now</h1>" in page and "Something is not right" not in page
    assert come_back in page
    assert 'role="alert"' not in page  # nobody did anything wrong
    assert "css/cfannotate.css" in page


def test_no_work_while_others_hold_the_last_rounds_says_when_to_try_again(client):
    campaign = make_labeling_campaign(units=1, k=1)
    url = reverse("join", kwargs={"token": join_token(campaign.id)})
    assert client.post(url).status_code == 302
    page = Client().post(url).content.decode()
    assert "other workers are doing the last rounds" in page
    assert "try again in about" in page and "minutes." in page


def test_the_invitation_page_says_all_rounds_are_taken_before_start(client):
    """A new worker reads it before clicking Start; the worker this browser already
    started is not told, since Start resumes their own rounds."""
    campaign = make_labeling_campaign(units=1, k=1, lease_minutes=30)
    url = reverse("join", kwargs={"token": join_token(campaign.id)})
    fresh = Client().get(url).content.decode()
    assert "data-all-taken" not in fresh  # the unit is still open
    assert client.post(url).status_code == 302
    page = Client().get(url).content.decode()
    assert "Other workers are doing every open round of this task right now." in page
    assert "try again in about 30 minutes." in page
    assert "Up to <strong>" in page  # the campaign's numbers, not rounds open now
    assert "data-all-taken" not in client.get(url).content.decode()  # the worker who holds it
    # Done, or not open: nothing comes back, and Start says why.
    campaign.status = "paused"
    campaign.save(update_fields=["status"])
    assert "data-all-taken" not in Client().get(url).content.decode()


def _keep(client, assignment, *, token=None, htmx=True):
    url = reverse("worker-lease-keep", kwargs={"token": _token(assignment)})
    headers = {"X-Worker-Form": token or form_token(assignment.token_nonce)}
    if htmx:
        headers["HX-Request"] = "true"
    return client.post(url, headers=headers)


def test_still_here_renews_the_lease_and_the_pages_say_when_it_ends(client, assignment):
    from datetime import timedelta

    from django.utils import timezone

    page = client.get(_round_url(assignment, 1)).content.decode()
    lease = assignment.campaign.lease_minutes
    seconds = int(re.search(r'data-lease-seconds="(\d+)"', page).group(1))
    assert lease * 60 - 5 <= seconds <= lease * 60
    assert f'data-lease-minutes="{lease}"' in page
    soon = timezone.now() + timedelta(minutes=2)
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=soon)

    response = _keep(client, assignment)
    assert response.status_code == 204
    assignment.refresh_from_db()
    assert assignment.lease_expires_at > soon + timedelta(minutes=lease - 3)
    # Without JavaScript (no warning is shown, but a post still works): back to the task.
    assert _keep(client, assignment, htmx=False)["Location"] == _round_url(assignment, 1)


def test_still_here_refuses_what_any_write_refuses(client, assignment):
    from datetime import timedelta

    from django.utils import timezone

    client.get(_round_url(assignment, 1))
    assert _keep(client, assignment, token="forged").status_code == 403
    url = reverse("worker-lease-keep", kwargs={"token": _token(assignment)})
    assert client.get(url).status_code == 405
    past = timezone.now() - timedelta(seconds=1)
    Assignment.objects.filter(pk=assignment.pk).update(lease_expires_at=past)
    expired = _keep(client, assignment)
    assert expired.status_code == 410
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.EXPIRED
    assert assignment.lease_expires_at == past  # not renewed
    # An expired assignment's pages set no timer.
    assert b"data-lease-seconds" not in client.get(_round_url(assignment, 1)).content


def test_still_here_on_a_submitted_assignment_says_there_is_nothing_to_keep(client, assignment):
    Assignment.objects.filter(pk=assignment.pk).update(state=AssignmentState.SUBMITTED)
    refused = _keep(client, assignment, htmx=False)
    assert refused.status_code == 409
    assert b"already submitted: there is nothing to keep" in refused.content
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED
