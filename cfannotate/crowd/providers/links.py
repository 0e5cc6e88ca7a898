"""Invitation links for in-house annotators: no platform behind them.

Entry takes either a personal link (whose worker is the one it names) or an anonymous
worker id (the browser's signed cookie) with the campaign's link or a named link with
an optional quota; review decisions, bonuses and blocks are recorded here only, since
there is nobody to send them to.
"""

from collections.abc import Mapping
from decimal import Decimal

from django.db import transaction

from cfannotate.core.exceptions import Conflict
from cfannotate.crowd.models import InvitationLink, PersonalLink, Platform
from cfannotate.crowd.providers.base import ActionResult, Provider, Started, SyncReport
from cfannotate.crowd.services import link_enter, personal_link_enter, worker_get_or_create

LOCAL = ActionResult(local_only=True)


class LinkProvider(Provider):
    platform = Platform.LINK

    def entry(self, *, source, params: Mapping[str, str]):
        """`source` is a `PersonalLink`, an `InvitationLink`, or a campaign for its general
        link; `params["worker"]` is the anonymous worker's id (never for a personal link)."""
        if isinstance(source, PersonalLink):
            return Started(assignment=personal_link_enter(link=source))
        link = source if isinstance(source, InvitationLink) else None
        campaign = link.campaign if link is not None else source
        # One transaction: a refused entry (no work left, link used up) registers nobody,
        # since the browser that sent it gets no cookie to come back as that worker.
        with transaction.atomic():
            worker = worker_get_or_create(
                platform=Platform.LINK, external_id=params.get("worker", "")
            )
            return Started(assignment=link_enter(campaign=campaign, worker=worker, link=link))

    def handback(self, *, assignment):
        return None  # the completion page shows the code, as it always does

    def publish(self, *, publication, entry_url: str) -> None:
        raise Conflict(
            "Invitation links are not published on a platform: create a link on the "
            "campaign page or with `manage.py crowd_link`."
        )

    def approve(self, *, assignment, feedback: str) -> ActionResult:
        return LOCAL

    def reject(self, *, assignment, feedback: str) -> ActionResult:
        return LOCAL

    def bonus(
        self,
        *,
        assignment,
        amount: Decimal,
        reason: str,
        unique_token: str,
        known_payments: int | None,
    ) -> ActionResult:
        return LOCAL

    def block(self, *, worker, reason: str) -> ActionResult:
        return LOCAL

    def sync(self, *, publication) -> SyncReport:
        return SyncReport()  # leases free abandoned link assignments on their own
