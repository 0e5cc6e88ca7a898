"""`manage.py mturk_publish CAMPAIGN ...`: a HIT type and ExternalQuestion HITs on MTurk.

AWS documents that MTurk stopped accepting new requesters on 2026-07-30 and closes on
2026-09-30; use Prolific or invitation links for new projects.
"""

from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from cfannotate.core.exceptions import CfannotateError
from cfannotate.crowd.management.helpers import base_url_or_error, campaign_or_error, command_error
from cfannotate.crowd.providers.mturk import MTurkOptions
from cfannotate.crowd.publishing import mturk_publish
from cfannotate.crowd.selectors import assignments_needed


def _amount(text: str) -> Decimal:
    try:
        return Decimal(text)
    except InvalidOperation:
        raise CommandError(
            f"--reward must be a dollar amount such as 2.50, not {text!r}."
        ) from None


# MTurkOptions' fields as this command's options, for the one line an error is.
OPTIONS = {
    "title": "--title",
    "description": "--description",
    "reward": "--reward",
    "assignments": "--assignments",
    "keywords": "--keywords",
    "assignments_per_hit": "--per-hit",
    "assignment_minutes": "--minutes",
    "auto_approve_days": "--auto-approve-days",
    "lifetime_days": "--lifetime-days",
    "frame_height": "--frame-height",
    "locale": "--locale",
    "min_approval_percent": "--min-approval",
    "min_approved_hits": "--min-approved-hits",
    "base_url": "--base-url",
}
# The qualification options, which --no-qualifications leaves out.
QUALIFICATIONS = {
    "locale": "--locale",
    "min_approval": "--min-approval",
    "min_approved_hits": "--min-approved-hits",
}


def _qualifications(o: dict) -> dict:
    """The MTurkOptions qualification fields: none with --no-qualifications (which refuses
    any qualification option beside it), else the options given or their defaults."""
    if o["no_qualifications"]:
        for key, option in QUALIFICATIONS.items():
            if o[key] is not None:
                raise CommandError(
                    f"{option} does not go with --no-qualifications, which leaves out "
                    "every locale and approval requirement."
                )
        return {"locale": "", "min_approval_percent": None, "min_approved_hits": None}
    defaults = MTurkOptions
    return {
        "locale": (defaults.locale if o["locale"] is None else o["locale"]).upper(),
        "min_approval_percent": (
            defaults.min_approval_percent if o["min_approval"] is None else o["min_approval"]
        ),
        "min_approved_hits": (
            defaults.min_approved_hits if o["min_approved_hits"] is None else o["min_approved_hits"]
        ),
    }


class Command(BaseCommand):
    help = (
        "Publish a campaign on MTurk: a HIT type (reward, duration, auto-approval, "
        "qualifications: US locale, 97%% approval, 1000 approved HITs by default) and HITs "
        "framing the campaign's entry URL. The sandbox unless --live."
    )

    def add_arguments(self, parser):
        defaults = MTurkOptions
        parser.add_argument("campaign", type=int, help="Campaign id.")
        parser.add_argument("--title", required=True)
        parser.add_argument("--description", required=True)
        parser.add_argument("--reward", required=True, help="USD per assignment, e.g. 2.50.")
        parser.add_argument("--assignments", type=int, help="In all (default: what units need).")
        parser.add_argument("--keywords", default=defaults.keywords)
        parser.add_argument("--per-hit", type=int, default=defaults.assignments_per_hit)
        parser.add_argument("--minutes", type=int, default=defaults.assignment_minutes)
        parser.add_argument("--auto-approve-days", type=int, default=defaults.auto_approve_days)
        parser.add_argument("--lifetime-days", type=int, default=defaults.lifetime_days)
        parser.add_argument("--frame-height", type=int, default=defaults.frame_height)
        parser.add_argument("--locale", help=f'Default {defaults.locale}; "" for any country.')
        parser.add_argument(
            "--min-approval", type=int, help=f"Percent (default {defaults.min_approval_percent})."
        )
        parser.add_argument(
            "--min-approved-hits", type=int, help=f"Default {defaults.min_approved_hits}."
        )
        parser.add_argument(
            "--no-qualifications", action="store_true", help="No locale or approval requirements."
        )
        parser.add_argument("--live", action="store_true", help="Real workers, real money.")
        parser.add_argument("--base-url", default=None, help="https:// address of this site.")

    def handle(self, *args, **o):
        qualifications = _qualifications(o)
        campaign = campaign_or_error(o["campaign"])
        base_url = base_url_or_error(o["base_url"])
        assignments = o["assignments"]
        options = MTurkOptions(
            title=o["title"],
            description=o["description"],
            reward=_amount(o["reward"]),
            assignments=assignments_needed(campaign) if assignments is None else assignments,
            keywords=o["keywords"],
            assignments_per_hit=o["per_hit"],
            assignment_minutes=o["minutes"],
            auto_approve_days=o["auto_approve_days"],
            lifetime_days=o["lifetime_days"],
            frame_height=o["frame_height"],
            sandbox=not o["live"],
            **qualifications,
        )
        try:
            publication = mturk_publish(campaign=campaign, options=options, base_url=base_url)
        except CfannotateError as error:
            raise command_error(error, OPTIONS) from None
        where = "the MTurk sandbox" if publication.sandbox else "MTurk (live)"
        hits = ", ".join(publication.hits.values_list("hit_id", flat=True))
        self.stdout.write(
            self.style.SUCCESS(
                f"Published on {where}: HIT type {publication.external_id}, HITs {hits}."
            )
        )
