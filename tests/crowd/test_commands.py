"""The crowd management commands: one line on success, one clear line on every error."""

from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from cfannotate.crowd.models import (
    BlockScope,
    InvitationLink,
    PersonalLink,
    PlatformAction,
    Publication,
    WorkerBlock,
    WorkerStatus,
)
from cfannotate.labeling.assignments import assignment_start
from tests.crowd.conftest import finish
from tests.factories import make_worker

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_crowd_link_prints_the_link(campaign):
    out = _run("crowd_link", str(campaign.id), "--name", "Lab", "--quota", "5")
    assert "for 5 assignments: https://labels.example.org/join/link/" in out
    assert InvitationLink.objects.get().quota == 5


def test_crowd_link_prints_a_personal_link(campaign):
    out = _run("crowd_link", str(campaign.id), "--worker", "ann", "--days", "3")
    assert "Personal link of 'ann', until " in out
    assert "https://labels.example.org/join/personal/" in out
    link = PersonalLink.objects.get()
    assert link.worker.external_id == "ann"
    with pytest.raises(CommandError, match="valid for 1 to 365 days"):
        _run("crowd_link", str(campaign.id), "--worker", "ann", "--days", "0")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["crowd_link", "99999", "--name", "x"], "No campaign with id 99999"),
        (["crowd_link", "{c}", "--name", " "], "Give the link a name"),
        (["crowd_review", "approve", "99999"], "No assignment with id 99999"),
        (["crowd_review", "block", "99999", "--reason", "x"], "No worker with id 99999"),
        (["crowd_sync", "99999"], "No campaign with id 99999"),
    ],
)
def test_errors_are_one_line(campaign, args, message):
    with pytest.raises(CommandError, match=message):
        _run(*[a.format(c=campaign.id) for a in args])


def test_no_base_url_says_what_to_set(campaign, settings):
    settings.CROWD_PUBLIC_URL = ""
    with pytest.raises(CommandError, match="--base-url"):
        _run("crowd_link", str(campaign.id), "--name", "Lab")


def test_crowd_review_decides_on_link_work(campaign):
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    assert "Approve: assignment" in _run("crowd_review", "approve", str(assignment.id))
    _run(
        "crowd_review", "bonus", str(assignment.id),
        "--amount", "0.40", "--reason", "Good", "--token", "cli-1",
    )  # fmt: skip
    with pytest.raises(CommandError, match="with at most two decimals"):
        _run(
            "crowd_review", "bonus", str(assignment.id),
            "--amount", "0.401", "--reason", "Good", "--token", "cli-2",
        )  # fmt: skip
    _run("crowd_review", "block", str(assignment.worker_id), "--reason", "Done here")
    assert assignment.worker.__class__.objects.get(pk=assignment.worker_id).status == (
        WorkerStatus.BLOCKED
    )
    assert PlatformAction.objects.get(action="bonus").amount == Decimal("0.40")


def test_crowd_review_blocks_for_a_campaigns_researcher_or_everywhere(campaign):
    worker = finish(assignment_start(campaign=campaign, worker=make_worker())).worker
    out = _run(
        "crowd_review", "block", str(worker.id), "--reason", "Spam",
        "--campaign", str(campaign.id), "--campaign-only",
    )  # fmt: skip
    assert f"Blocked {worker} from campaign {campaign.id}." in out
    assert WorkerBlock.objects.get().scope == BlockScope.CAMPAIGN
    out = _run("crowd_review", "block", str(worker.id), "--reason", "Spam", "--campaign",
               str(campaign.id))  # fmt: skip
    assert f"from every campaign of {campaign.owner}" in out
    worker.refresh_from_db()
    assert worker.status == WorkerStatus.ACTIVE
    with pytest.raises(CommandError, match="--campaign-only needs --campaign"):
        _run("crowd_review", "block", str(worker.id), "--reason", "x", "--campaign-only")


def test_mturk_publish_command(campaign, mturk_stub):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT7"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HITZ"}})
    out = _run(
        "mturk_publish", str(campaign.id), "--title", "Judge", "--description", "Judge edits",
        "--reward", "1.00", "--assignments", "3", "--no-qualifications",
    )  # fmt: skip
    assert "Published on the MTurk sandbox: HIT type HT7, HITs HITZ." in out
    assert mturk_stub.environments == [True]
    with pytest.raises(CommandError, match="--reward must be a dollar amount"):
        _run("mturk_publish", str(campaign.id), "--title", "t", "--description", "d",
             "--reward", "cheap")  # fmt: skip


def test_prolific_study_and_sync_commands(campaign, prolific):
    out = _run(
        "prolific_study", str(campaign.id), "--name", "Judge", "--description", "Judge edits",
        "--reward-cents", "200", "--minutes", "12",
    )  # fmt: skip
    publication = Publication.objects.get()
    assert f"draft Prolific study {publication.external_id}" in out
    assert prolific.studies[publication.external_id]["total_available_places"] >= 1
    synced = _run("crowd_sync", str(campaign.id))
    assert "Synced: 1 study or HIT refreshed, 0 submissions checked." in synced


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--name", "Lab", "--days", "3"],
            "--days does not go with --name: a shared link has no end date; "
            "--days is for a personal --worker link.",
        ),
        (
            ["--worker", "bob", "--quota", "3"],
            "--quota does not go with --worker: a personal link is for one worker; "
            "a quota limits a shared --name link.",
        ),
        (
            ["--name", "Lab", "--base-url", "notaurl"],
            "--base-url must be an http:// or https:// address such as "
            "https://labels.example.org, not 'notaurl'.",
        ),
        (
            ["--worker", "bob", "--base-url", "https://"],
            "--base-url must be an http:// or https:// address such as "
            "https://labels.example.org, not 'https://'.",
        ),
    ],
)
def test_crowd_link_refuses_options_that_do_not_apply_and_makes_no_link(campaign, args, message):
    with pytest.raises(CommandError) as caught:
        _run("crowd_link", str(campaign.id), *args)
    assert str(caught.value) == message
    assert not InvitationLink.objects.exists() and not PersonalLink.objects.exists()


def test_a_public_url_that_is_no_address_is_named(campaign, settings):
    settings.CROWD_PUBLIC_URL = "labels.example.org"
    with pytest.raises(CommandError) as caught:
        _run("crowd_link", str(campaign.id), "--name", "Lab")
    assert str(caught.value).startswith("CFANNOTATE_PUBLIC_URL must be an http:// or https://")
    assert not InvitationLink.objects.exists()


MTURK = ["--title", "Judge", "--description", "Judge edits", "--reward", "1.00"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--assignments", "0"],
            "Some MTurk settings are not valid: --assignments. "
            "(--assignments: Between 1 and 100000.)",
        ),
        (
            ["--assignments", "-3"],
            "Some MTurk settings are not valid: --assignments. "
            "(--assignments: Between 1 and 100000.)",
        ),
        (
            ["--per-hit", "0"],
            "Some MTurk settings are not valid: --per-hit. (--per-hit: Between 1 and 1000.)",
        ),
        (
            ["--no-qualifications", "--min-approval", "50"],
            "--min-approval does not go with --no-qualifications, which leaves out every "
            "locale and approval requirement.",
        ),
        (
            ["--no-qualifications", "--locale", "GB"],
            "--locale does not go with --no-qualifications, which leaves out every "
            "locale and approval requirement.",
        ),
        (
            ["--no-qualifications", "--min-approved-hits", "0"],
            "--min-approved-hits does not go with --no-qualifications, which leaves out every "
            "locale and approval requirement.",
        ),
    ],
)
def test_mturk_publish_names_the_option_it_refuses(campaign, mturk_stub, args, message):
    with pytest.raises(CommandError) as caught:
        _run("mturk_publish", str(campaign.id), *MTURK, *args)
    assert str(caught.value) == message
    assert not Publication.objects.exists()  # and the stub was asked nothing


def test_mturk_publish_takes_its_qualification_defaults_or_the_options(campaign, mturk_stub):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT7"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HITZ"}})
    _run("mturk_publish", str(campaign.id), *MTURK, "--assignments", "3", "--min-approval", "50")
    options = Publication.objects.get().options
    assert (options["locale"], options["min_approval_percent"]) == ("US", 50)
    assert options["min_approved_hits"] == 1000


@pytest.mark.parametrize("places", ["0", "-3"])
def test_prolific_study_refuses_no_places(campaign, prolific, places):
    with pytest.raises(CommandError) as caught:
        _run(
            "prolific_study", str(campaign.id), "--name", "Judge", "--description", "Judge edits",
            "--reward-cents", "200", "--minutes", "12", "--places", places,
        )  # fmt: skip
    assert str(caught.value) == (
        "Some Prolific settings are not valid: --places. (--places: Between 1 and 100000.)"
    )
    assert not Publication.objects.exists() and not prolific.studies


def test_crowd_sync_with_a_problem_warns_and_fails(campaign, settings):
    from io import StringIO

    from tests.crowd.conftest import make_prolific_publication

    settings.CROWD_PROLIFIC_TOKEN = ""  # Prolific not configured: nothing is asked of it
    make_prolific_publication(campaign)
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("crowd_sync", str(campaign.id), stdout=out, stderr=err)
    assert str(caught.value) == "The sync met 1 problem: see above."
    assert "Prolific: Prolific is not configured: CFANNOTATE_PROLIFIC_TOKEN" in err.getvalue()
    assert "Synced with problems: " in out.getvalue()
    assert out.getvalue().strip().endswith("1 problem found.")
