"""Prolific: a draft study whose URL is our entry URL, completion by redirect with its code.

Prolific opens our study URL with `PROLIFIC_PID`, `STUDY_ID` and `SESSION_ID` (the
submission id). Before approving, rejecting or paying, the submission is fetched from the
API and must name the participant and study bound at entry. Returned and timed-out
submissions free their units at the next status sync.
"""

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from cfannotate.core.exceptions import Conflict, Forbidden, InvalidInput
from cfannotate.crowd.models import Platform, Publication, ReviewDecision, Worker
from cfannotate.crowd.providers.base import (
    ActionResult,
    Handback,
    NotVerified,
    PlatformError,
    Preview,
    Provider,
    Started,
    SyncReport,
    plain,
)
from cfannotate.crowd.providers.prolific_api import ProlificClient
from cfannotate.crowd.services import (
    assignment_enter,
    assignment_review_record,
    worker_get_or_create,
)
from cfannotate.labeling.assignments import assignment_return
from cfannotate.labeling.models import Assignment, AssignmentState

PROLIFIC_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")
ENTRY_PARAMETERS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
# Prolific replaces these placeholders in the study URL for each participant.
URL_PLACEHOLDERS = "&".join(f"{name}={{{{%{name}%}}}}" for name in ENTRY_PARAMETERS)
MIN_REJECTION_MESSAGE = 100  # Prolific's minimum for the message a rejected participant reads
ABANDONED = {"RETURNED", "TIMED-OUT"}
AWAITING_REVIEW = "AWAITING REVIEW"


def prolific_client() -> ProlificClient:
    return ProlificClient()


@dataclass(frozen=True)
class ProlificOptions:
    """A draft study: what participants see in Prolific's list, and what they are paid."""

    name: str
    description: str
    places: int
    reward_cents: int  # per participant, in the study currency's cents or pence
    minutes: int  # estimated completion time
    internal_name: str = ""

    def check(self) -> None:
        errors: dict[str, list[str]] = {}
        if not 1 <= len(self.name.strip()) <= 120:
            errors["name"] = ["1 to 120 characters."]
        if not 1 <= len(self.description.strip()) <= 5000:
            errors["description"] = ["1 to 5000 characters."]
        if not 1 <= self.places <= 100_000:
            errors["places"] = ["Between 1 and 100000."]
        if not 1 <= self.reward_cents <= 100_000:
            errors["reward_cents"] = ["Between 1 and 100000 cents."]
        if not 1 <= self.minutes <= 24 * 60:
            errors["minutes"] = ["Between 1 minute and 24 hours."]
        if len(self.internal_name) > 200:
            errors["internal_name"] = ["At most 200 characters."]
        if errors:
            raise InvalidInput(
                "Some Prolific settings are not valid: " + ", ".join(sorted(errors)) + ".",
                fields=errors,
            )

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping) -> "ProlificOptions":
        return cls(**data)


# Prolific's study fields, as the study form names them (crowd/forms.py: ProlificStudyForm).
STUDY_FIELD_LABELS = {
    "name": "Name",
    "description": "Description",
    "total_available_places": "Places",
    "reward": "Reward (cents or pence)",
    "estimated_completion_time": "Estimated minutes",
}
SITE_FIELDS = {"external_study_url", "completion_codes", "prolific_id_option"}


def _study_fix(fields: Mapping[str, list[str]]) -> str:
    """What to change when Prolific refused a study, from the fields it named."""
    labels = [STUDY_FIELD_LABELS[name] for name in fields if name in STUDY_FIELD_LABELS]
    if labels:
        return (
            f"Change {', '.join(labels)} in “Create a Prolific draft study” and try again "
            "(Prolific also asks for a minimum pay per hour: reward over estimated minutes)."
        )
    if SITE_FIELDS & set(fields):
        return (
            "Prolific refused the study link this site gives: check that CFANNOTATE_PUBLIC_URL "
            "is this site's public https:// address."
        )
    return "Check the study settings on the form against Prolific's rules, then try again."


def _participant(submission: dict) -> str:
    return submission.get("participant_id") or submission.get("participant") or ""


class ProlificProvider(Provider):
    platform = Platform.PROLIFIC

    # --- Entry ---------------------------------------------------------------------------

    def entry(self, *, source: Publication, params: Mapping[str, str]):
        values = {name: (params.get(name) or "").strip() for name in ENTRY_PARAMETERS}
        if not any(values.values()):
            return Preview(campaign=source.campaign)  # opened outside Prolific: look only
        missing = [name for name, value in values.items() if not value]
        if missing:
            raise InvalidInput(
                "This page was opened without Prolific's " + ", ".join(missing) + ". "
                "Open the study from Prolific.",
                fields={name: ["Required."] for name in missing},
            )
        for name, value in values.items():
            if not PROLIFIC_ID.match(value):
                raise InvalidInput(
                    f"{name} is not a Prolific id. Open the study from Prolific.",
                    fields={name: ["Not a Prolific id."]},
                )
        if values["STUDY_ID"] != source.external_id:
            raise Forbidden("This link belongs to another Prolific study. Open it from Prolific.")
        worker = worker_get_or_create(
            platform=Platform.PROLIFIC, external_id=values["PROLIFIC_PID"]
        )
        assignment = assignment_enter(
            campaign=source.campaign,
            worker=worker,
            platform_assignment_id=values["SESSION_ID"],
            platform_task_id=values["STUDY_ID"],
        )
        return Started(assignment=assignment)

    def handback(self, *, assignment: Assignment) -> Handback | None:
        publication = self._publication(assignment, required=False)
        if publication is None or not publication.completion_code:
            return None
        query = urlencode({"cc": publication.completion_code})
        return Handback(
            method="get",
            url=f"{settings.CROWD_PROLIFIC_COMPLETE_URL}?{query}",
            label="Back to Prolific",
            note=(
                "Your answers are saved here. Go back to Prolific to record your completion; "
                "if the button does not work, enter the code above on Prolific."
            ),
            code=publication.completion_code,
        )

    # --- Publishing ---------------------------------------------------------------------------

    def check_configured(self, *, sandbox: bool) -> None:
        prolific_client().check_configured()

    def publish(self, *, publication: Publication, entry_url: str) -> None:
        options = ProlificOptions.from_json(publication.options)
        separator = "&" if "?" in entry_url else "?"
        try:
            study = self._study_create(options, publication, f"{entry_url}{separator}")
        except PlatformError as error:
            raise PlatformError(
                error.message, fields=error.fields, fix=error.fix or _study_fix(error.fields)
            ) from None
        if not study.get("id"):
            raise PlatformError("Prolific created no study id; nothing to link to.")
        publication.external_id = str(study["id"])
        publication.status = str(study.get("status", "UNPUBLISHED"))[:40]
        publication.save(update_fields=["external_id", "status"])

    def _study_create(self, options: ProlificOptions, publication: Publication, url: str):
        return prolific_client().study_create(
            {
                "name": options.name.strip(),
                "internal_name": options.internal_name.strip()
                or f"cfannotate campaign {publication.campaign_id}",
                "description": options.description.strip(),
                "external_study_url": f"{url}{URL_PLACEHOLDERS}",
                "prolific_id_option": "url_parameters",
                "completion_codes": [
                    {
                        "code": publication.completion_code,
                        "code_type": "COMPLETED",
                        # Quality control decides; nothing is approved automatically.
                        "actions": [{"action": "MANUALLY_REVIEW"}],
                    }
                ],
                "total_available_places": options.places,
                "estimated_completion_time": options.minutes,
                "reward": options.reward_cents,
                "device_compatibility": ["desktop"],
            }
        )

    def places_set(self, *, publication: Publication, total: int) -> ActionResult:
        """Prolific's places may grow, drafts and published studies alike (its API takes
        the new total); a completed study becomes active again."""
        study = prolific_client().study_update(
            publication.external_id, {"total_available_places": total}
        )
        publication.options = {**publication.options, "places": total}
        publication.status = str(study.get("status", publication.status))[:40]
        publication.save(update_fields=["options", "status"])
        return ActionResult(request_id=publication.external_id, response=plain(study))

    # --- Review ---------------------------------------------------------------------------

    def _publication(self, assignment: Assignment, *, required: bool = True):
        publication = Publication.objects.filter(
            campaign_id=assignment.campaign_id,
            platform=Platform.PROLIFIC,
            external_id=assignment.platform_task_id,
        ).first()
        if publication is None and required:
            raise NotVerified(
                f"Assignment {assignment.id} did not come from one of this campaign's Prolific "
                "studies; Prolific was not asked."
            )
        return publication

    def _verified(self, client: ProlificClient, assignment: Assignment) -> dict:
        """Prolific's record of the submission, after checking it is the one bound at entry."""
        self._publication(assignment)
        session = assignment.platform_assignment_id
        if not session:
            raise NotVerified(f"Assignment {assignment.id} has no Prolific submission id.")
        remote = client.submission_get(session)
        if _participant(remote) != assignment.worker.external_id:
            raise NotVerified(
                f"Prolific says submission {session} is participant {_participant(remote)}'s, "
                f"not {assignment.worker.external_id}'s; nothing was done."
            )
        if remote.get("study_id", assignment.platform_task_id) != assignment.platform_task_id:
            raise NotVerified(
                f"Prolific says submission {session} belongs to study {remote.get('study_id')}, "
                f"not {assignment.platform_task_id}; nothing was done."
            )
        return remote

    def approve(self, *, assignment: Assignment, feedback: str) -> ActionResult:
        client = prolific_client()
        remote = self._verified(client, assignment)
        status = remote.get("status")
        if status == "APPROVED":
            return ActionResult(response={"status": status, "already": True})
        if status != AWAITING_REVIEW:
            raise NotVerified(
                f"Prolific shows submission {assignment.platform_assignment_id} as {status}; "
                "only a submission awaiting review can be approved."
            )
        answer = client.submission_transition(assignment.platform_assignment_id, "APPROVE")
        return ActionResult(request_id=str(answer.get("id", "")), response=plain(answer))

    def reject(self, *, assignment: Assignment, feedback: str) -> ActionResult:
        if len(feedback.strip()) < MIN_REJECTION_MESSAGE:
            raise InvalidInput(
                f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} "
                "characters that tells the participant why.",
                fields={"feedback": ["Too short for Prolific."]},
            )
        client = prolific_client()
        remote = self._verified(client, assignment)
        status = remote.get("status")
        if status == "REJECTED":
            return ActionResult(response={"status": status, "already": True})
        if status != AWAITING_REVIEW:
            raise NotVerified(
                f"Prolific shows submission {assignment.platform_assignment_id} as {status}; "
                "only a submission awaiting review can be rejected."
            )
        answer = client.submission_transition(
            assignment.platform_assignment_id,
            "REJECT",
            message=feedback.strip(),
            rejection_category=settings.CROWD_PROLIFIC_REJECTION_CATEGORY,
        )
        return ActionResult(request_id=str(answer.get("id", "")), response=plain(answer))

    def bonus(
        self,
        *,
        assignment: Assignment,
        amount: Decimal,
        reason: str,
        unique_token: str,
        known_payments: int | None,
    ) -> ActionResult:
        client = prolific_client()
        remote = self._verified(client, assignment)
        status = remote.get("status")
        if status not in {"APPROVED", AWAITING_REVIEW}:
            raise NotVerified(
                f"Prolific shows submission {assignment.platform_assignment_id} as {status}; "
                "a bonus is paid on completed work only."
            )
        cents = int(amount * 100)
        if known_payments is not None:
            # Prolific has no request token: an earlier, unanswered try went through when
            # the submission lists more bonuses of this amount than we know of.
            paid = [int(value) for value in remote.get("bonus_payments") or []]
            if paid.count(cents) > known_payments:
                return ActionResult(response={"already_paid": True, "cents": cents})
        batch = client.bonus_set_up(
            study_id=assignment.platform_task_id,
            participant_id=assignment.worker.external_id,
            amount=f"{amount:.2f}",
        )
        batch_id = str(batch.get("id", ""))
        if not batch_id:
            raise PlatformError("Prolific set up no bonus batch; nothing was paid.")
        try:
            answer = client.bonus_pay(batch_id)
        except PlatformError as error:
            raise PlatformError(
                f"Bonus batch {batch_id} was set up but not confirmed as paid: {error.message}"
            ) from None
        return ActionResult(request_id=batch_id, response=plain(answer))

    def block(self, *, worker: Worker, reason: str) -> ActionResult:
        group = settings.CROWD_PROLIFIC_BLOCKLIST_GROUP
        if not group:
            # Prolific has no account-wide block; without a blocklist group the block is
            # ours only (the worker cannot start assignments here any more).
            return ActionResult(
                local_only=True, response={"note": "No Prolific blocklist group is configured."}
            )
        answer = prolific_client().participant_group_add(group, [worker.external_id])
        return ActionResult(request_id=group, response=plain(answer))

    # --- Status ---------------------------------------------------------------------------

    def sync(self, *, publication: Publication) -> SyncReport:
        report = SyncReport()
        client = prolific_client()
        study = client.study_get(publication.external_id)
        publication.status = str(study.get("status", publication.status))[:40]
        publication.synced_at = timezone.now()
        publication.save(update_fields=["status", "synced_at"])
        report.updated += 1
        for submission in client.submissions(publication.external_id):
            report.checked += 1
            self._sync_submission(publication, submission, report)
        return report

    def _sync_submission(self, publication: Publication, remote: dict, report: SyncReport):
        session, status = str(remote.get("id", "")), remote.get("status", "")
        local = (
            Assignment.objects.select_related("worker")
            .filter(campaign_id=publication.campaign_id, platform_assignment_id=session)
            .first()
        )
        if local is None:
            if status in {AWAITING_REVIEW, "APPROVED"}:
                report.problems.append(
                    f"Prolific submission {session} (participant {_participant(remote)}) was "
                    "completed but never entered the task here: reject or ask for a return."
                )
            return
        if local.worker.external_id != _participant(remote):
            report.problems.append(
                f"Prolific submission {session} is participant {_participant(remote)}'s, but "
                f"entered here as {local.worker.external_id}: do not pay it before checking."
            )
            return
        if status in ABANDONED and local.state == AssignmentState.ACTIVE:
            try:
                assignment_return(assignment=local)
                report.freed += 1
            except Conflict:
                pass  # it ended here a moment ago
            return
        if status == AWAITING_REVIEW and local.state != AssignmentState.SUBMITTED:
            report.problems.append(
                f"Prolific submission {session} says it is complete, but it is "
                f"{local.get_state_display().lower()} here."
            )
        decisions = {"APPROVED": ReviewDecision.APPROVED, "REJECTED": ReviewDecision.REJECTED}
        decision = decisions.get(status)
        if decision and getattr(getattr(local, "review", None), "decision", None) != decision:
            completed = remote.get("completed_at")
            assignment_review_record(
                assignment=local,
                decision=decision,
                at=parse_datetime(completed) if isinstance(completed, str) else None,
            )
            report.reviews += 1
