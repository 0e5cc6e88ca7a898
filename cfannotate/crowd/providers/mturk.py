"""Amazon Mechanical Turk: ExternalQuestion HITs through boto3's `mturk` client.

Workers see our entry URL in MTurk's iframe with `assignmentId`, `hitId`, `workerId` and
`turkSubmitTo`; a finished assignment is posted to `turkSubmitTo/mturk/externalSubmit`.
Before approving, rejecting or paying, `GetAssignment` must confirm the worker, the HIT
and the completion code we bound at entry. Note: AWS documents that MTurk stopped
accepting new requesters on 2026-07-30 and closes on 2026-09-30.
"""

import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from django.conf import settings
from django.utils import timezone

from cfannotate.core.exceptions import Forbidden, InvalidInput
from cfannotate.crowd.models import MTurkHit, Platform, Publication, ReviewDecision, Worker
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
from cfannotate.crowd.services import (
    assignment_enter,
    assignment_review_record,
    worker_get_or_create,
)
from cfannotate.labeling.models import Assignment, AssignmentState

PREVIEW_ASSIGNMENT_ID = "ASSIGNMENT_ID_NOT_AVAILABLE"
EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/"
    "ExternalQuestion.xsd"
)
# MTurk's system qualification types (the same ids in the sandbox).
LOCALE_QUALIFICATION = "00000000000000000071"
APPROVAL_RATE_QUALIFICATION = "000000000000000000L0"
APPROVED_HITS_QUALIFICATION = "00000000000000000040"
RESULT_FIELD = "completion_code"

WORKER_ID = re.compile(r"^A[A-Z0-9]{1,63}$")
ENTITY_ID = re.compile(r"^[A-Z0-9]{1,64}$")
COUNTRY = re.compile(r"^[A-Z]{2}$")


def mturk_client(*, sandbox: bool):
    """A boto3 `mturk` client for the sandbox or live requester endpoint.

    Credentials come from the environment (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY or
    AWS_PROFILE), as boto3 reads them; tests replace this function with a stubbed client.
    """
    import boto3

    endpoint = settings.CROWD_MTURK_ENDPOINTS["sandbox" if sandbox else "live"]
    return boto3.client("mturk", region_name=settings.CROWD_MTURK_REGION, endpoint_url=endpoint)


def mturk_credentials_found() -> bool:
    """Whether boto3 finds requester credentials where `mturk_client` looks for them; tests
    that stub the client replace this too."""
    import boto3

    return boto3.Session().get_credentials() is not None


NO_CREDENTIALS = (
    "MTurk credentials are not configured: set AWS_ACCESS_KEY_ID and "
    "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE) for the requester account."
)
CREDENTIALS_FIX = (
    "Check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE): they must belong to "
    "an AWS account linked to your MTurk requester account (for the sandbox, link it at "
    "requestersandbox.mturk.com, Developer)."
)
# What the researcher can do about MTurk's error codes (ClientError's Error.Code).
CODE_FIXES = {
    "UnrecognizedClientException": CREDENTIALS_FIX,
    "InvalidClientTokenId": CREDENTIALS_FIX,
    "SignatureDoesNotMatch": CREDENTIALS_FIX,
    "AccessDeniedException": CREDENTIALS_FIX,
    "ServiceFailure": "MTurk had a problem on its side: try again in a few minutes.",
    "ThrottlingException": "MTurk is limiting requests: wait a minute and try again.",
}
# ... and about the words of a RequestError, MTurk's catch-all code.
MESSAGE_FIXES = (
    ("insufficient funds", "Add funds to the requester account, or publish to the sandbox."),
    (
        "qualification",
        "Check the qualification settings on the form (locale, approval rate, "
        "approved HITs): the sandbox and live MTurk differ in what they accept.",
    ),
    ("reward", "Check the reward on the form: MTurk wants at least 0.01 USD per assignment."),
    ("not authorized", CREDENTIALS_FIX),
    ("linked", CREDENTIALS_FIX),
    ("agree", "Sign in to the requester site with this AWS account and accept its terms."),
)


def _client_error_fix(code: str, message: str) -> str:
    if code in CODE_FIXES:
        return CODE_FIXES[code]
    lowered = message.lower()
    return next((fix for words, fix in MESSAGE_FIXES if words in lowered), "")


def _call(client, operation: str, **params) -> dict:
    """One MTurk API call; every failure becomes a PlatformError with a sentence and, where
    one is known, what to fix."""
    from botocore import xform_name
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        NoCredentialsError,
        ParamValidationError,
    )

    try:
        return getattr(client, xform_name(operation))(**params)
    except ClientError as error:
        detail = error.response.get("Error", {})
        code = detail.get("Code") or ""
        message = detail.get("Message") or code or str(error)
        raise PlatformError(
            f"MTurk refused {operation}: {message}", fix=_client_error_fix(code, message)
        ) from None
    except NoCredentialsError:
        raise PlatformError(NO_CREDENTIALS, fix=CREDENTIALS_FIX) from None
    except ParamValidationError as error:
        # Refused by the client before anything was sent: a value MTurk's API cannot take.
        raise PlatformError(
            f"MTurk's client refused {operation} before sending it: {' '.join(str(error).split())}",
            fix="Check the values on the form (title, description, keywords, reward).",
        ) from None
    except BotoCoreError as error:
        raise PlatformError(
            f"MTurk could not be reached for {operation} ({error.__class__.__name__}). "
            "Nothing was changed; try again later.",
            fix="Check that this server can reach MTurk's requester endpoint over HTTPS "
            "(mturk-requester[-sandbox].us-east-1.amazonaws.com), then try again.",
        ) from None


def _request_id(answer: dict) -> str:
    return answer.get("ResponseMetadata", {}).get("RequestId", "")


def _without_metadata(answer: dict) -> dict:
    return plain({key: value for key, value in answer.items() if key != "ResponseMetadata"})


# --- Publishing options ------------------------------------------------------------------------


@dataclass(frozen=True)
class MTurkOptions:
    """A HIT type and its HITs. Qualification defaults are Polyjuice's (Appendix C.2)."""

    title: str
    description: str
    reward: Decimal  # USD per assignment
    assignments: int  # in all, over every HIT
    keywords: str = "text, labeling, sentences, language"
    assignments_per_hit: int = 9  # MTurk charges more from 10 assignments per HIT
    assignment_minutes: int = 120
    auto_approve_days: int = 3
    lifetime_days: int = 7
    frame_height: int = 800  # pixels; 0 lets the task fill the worker's window
    sandbox: bool = True
    locale: str = "US"  # empty: any country
    min_approval_percent: int | None = 97
    min_approved_hits: int | None = 1000

    def check(self) -> None:
        errors: dict[str, list[str]] = {}

        def bad(name: str, message: str) -> None:
            errors.setdefault(name, []).append(message)

        if not 1 <= len(self.title.strip()) <= 128:
            bad("title", "1 to 128 characters.")
        if not 1 <= len(self.description.strip()) <= 2000:
            bad("description", "1 to 2000 characters.")
        if len(self.keywords) > 1000:
            bad("keywords", "At most 1000 characters.")
        try:
            reward = Decimal(self.reward)
            if not reward.is_finite() or reward != reward.quantize(Decimal("0.01")):
                raise InvalidOperation
            if not Decimal("0.01") <= reward <= Decimal("100"):
                bad("reward", "Between 0.01 and 100 US dollars.")
        except (InvalidOperation, TypeError, ValueError):
            bad("reward", "A dollar amount with at most two decimals, e.g. 2.50.")
        if not 1 <= self.assignments <= 100_000:
            bad("assignments", "Between 1 and 100000.")
        if not 1 <= self.assignments_per_hit <= 1000:
            bad("assignments_per_hit", "Between 1 and 1000.")
        if not 1 <= self.assignment_minutes <= 7 * 24 * 60:
            bad("assignment_minutes", "Between 1 minute and 7 days.")
        if not 0 <= self.auto_approve_days <= 30:
            bad("auto_approve_days", "Between 0 and 30 days.")
        if not 1 <= self.lifetime_days <= 365:
            bad("lifetime_days", "Between 1 and 365 days.")
        if not 0 <= self.frame_height <= 10_000:
            bad("frame_height", "Between 0 and 10000 pixels.")
        if self.locale and not COUNTRY.match(self.locale):
            bad("locale", "A two-letter country code such as US, or empty.")
        if self.min_approval_percent is not None and not 0 <= self.min_approval_percent <= 100:
            bad("min_approval_percent", "Between 0 and 100, or empty.")
        if self.min_approved_hits is not None and self.min_approved_hits < 0:
            bad("min_approved_hits", "Zero or more, or empty.")
        if errors:
            raise InvalidInput(
                "Some MTurk settings are not valid: " + ", ".join(sorted(errors)) + ".",
                fields=errors,
            )

    def as_json(self) -> dict:
        data = asdict(self)
        data["reward"] = str(self.reward)
        return data

    @classmethod
    def from_json(cls, data: Mapping) -> "MTurkOptions":
        return cls(**{**data, "reward": Decimal(str(data["reward"]))})

    def qualification_requirements(self) -> list[dict]:
        requirements = []
        if self.locale:
            requirements.append(
                {
                    "QualificationTypeId": LOCALE_QUALIFICATION,
                    "Comparator": "EqualTo",
                    "LocaleValues": [{"Country": self.locale}],
                    "ActionsGuarded": "Accept",
                }
            )
        if self.min_approval_percent is not None:
            requirements.append(
                {
                    "QualificationTypeId": APPROVAL_RATE_QUALIFICATION,
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [self.min_approval_percent],
                    "ActionsGuarded": "Accept",
                }
            )
        if self.min_approved_hits is not None:
            requirements.append(
                {
                    "QualificationTypeId": APPROVED_HITS_QUALIFICATION,
                    "Comparator": "GreaterThanOrEqualTo",
                    "IntegerValues": [self.min_approved_hits],
                    "ActionsGuarded": "Accept",
                }
            )
        return requirements

    def hit_sizes(self) -> list[int]:
        """MaxAssignments of each HIT: as many full HITs as fit, then the rest."""
        count = math.ceil(self.assignments / self.assignments_per_hit)
        sizes = [self.assignments_per_hit] * count
        sizes[-1] = self.assignments - self.assignments_per_hit * (count - 1)
        return sizes


def external_question(url: str, frame_height: int) -> str:
    """The ExternalQuestion XML that makes MTurk frame `url`."""
    return (
        f'<ExternalQuestion xmlns="{EXTERNAL_QUESTION_NS}">'
        f"<ExternalURL>{escape(url)}</ExternalURL>"
        f"<FrameHeight>{int(frame_height)}</FrameHeight>"
        "</ExternalQuestion>"
    )


def answer_fields(answer_xml: str) -> dict[str, str]:
    """The fields a worker's externalSubmit carried, from MTurk's QuestionFormAnswers XML."""
    if not answer_xml:
        return {}
    try:
        # MTurk writes this XML; expat (>= 2.4) caps entity expansion anyway.
        root = ElementTree.fromstring(answer_xml)  # noqa: S314
    except ElementTree.ParseError:
        return {}
    fields = {}
    for answer in root.iter():
        if not answer.tag.endswith("Answer") or answer.tag.endswith("QuestionFormAnswers"):
            continue
        name = value = None
        for child in answer:
            if child.tag.endswith("QuestionIdentifier"):
                name = (child.text or "").strip()
            elif child.tag.endswith("FreeText"):
                value = (child.text or "").strip()
        if name:
            fields[name] = value or ""
    return fields


def _environment(sandbox: bool) -> str:
    return "sandbox" if sandbox else "live"


class MTurkProvider(Provider):
    platform = Platform.MTURK

    # --- Entry ---------------------------------------------------------------------------

    def entry(self, *, source: Publication, params: Mapping[str, str]):
        assignment_id = (params.get("assignmentId") or "").strip()
        if not assignment_id or assignment_id == PREVIEW_ASSIGNMENT_ID:
            return Preview(campaign=source.campaign)
        worker_id = (params.get("workerId") or "").strip()
        hit_id = (params.get("hitId") or "").strip()
        submit_to = (params.get("turkSubmitTo") or "").strip().rstrip("/")
        missing = [
            name
            for name, value in (
                ("workerId", worker_id),
                ("hitId", hit_id),
                ("turkSubmitTo", submit_to),
            )
            if not value
        ]
        if missing:
            raise InvalidInput(
                "This page was opened without MTurk's " + ", ".join(missing) + ". "
                "Open the HIT from MTurk.",
                fields={name: ["Required."] for name in missing},
            )
        for name, value, pattern in (
            ("workerId", worker_id, WORKER_ID),
            ("assignmentId", assignment_id, ENTITY_ID),
            ("hitId", hit_id, ENTITY_ID),
        ):
            if not pattern.match(value):
                raise InvalidInput(
                    f"{name} is not an MTurk id. Open the HIT from MTurk.",
                    fields={name: ["Not an MTurk id."]},
                )
        if not source.hits.filter(hit_id=hit_id).exists():
            raise Forbidden("This HIT is not part of this task. Open the task from MTurk.")
        expected = settings.CROWD_MTURK_SUBMIT_ORIGINS[_environment(source.sandbox)].rstrip("/")
        if submit_to != expected:
            raise Forbidden("This page was not opened by MTurk. Open the HIT from MTurk.")
        worker = worker_get_or_create(platform=Platform.MTURK, external_id=worker_id)
        assignment = assignment_enter(
            campaign=source.campaign,
            worker=worker,
            platform_assignment_id=assignment_id,
            platform_task_id=hit_id,
        )
        return Started(assignment=assignment)

    def frame_origins(self) -> list[str]:
        return list(settings.CROWD_MTURK_FRAME_ORIGINS)

    def handback(self, *, assignment: Assignment) -> Handback | None:
        hit = self._hit(assignment, required=False)
        if hit is None:
            return None
        origin = settings.CROWD_MTURK_SUBMIT_ORIGINS[_environment(hit.publication.sandbox)]
        origin = origin.rstrip("/")
        return Handback(
            method="post",
            url=origin + "/mturk/externalSubmit",
            label="Submit the HIT",
            note="Your answers are saved here. Submit the HIT so that MTurk records your work.",
            fields={
                "assignmentId": assignment.platform_assignment_id,
                RESULT_FIELD: assignment.completion_code,
            },
            origin=origin,
        )

    # --- Publishing ---------------------------------------------------------------------------

    def check_configured(self, *, sandbox: bool) -> None:
        if not mturk_credentials_found():
            raise PlatformError(NO_CREDENTIALS, fix=CREDENTIALS_FIX)

    def publish(self, *, publication: Publication, entry_url: str) -> None:
        options = MTurkOptions.from_json(publication.options)
        client = mturk_client(sandbox=publication.sandbox)
        hit_type = _call(
            client,
            "CreateHITType",
            AutoApprovalDelayInSeconds=options.auto_approve_days * 24 * 3600,
            AssignmentDurationInSeconds=options.assignment_minutes * 60,
            Reward=f"{options.reward:.2f}",
            Title=options.title.strip(),
            Keywords=options.keywords.strip(),
            Description=options.description.strip(),
            QualificationRequirements=options.qualification_requirements(),
        )
        publication.external_id = hit_type["HITTypeId"]
        publication.status = "Assignable"
        publication.save(update_fields=["external_id", "status"])
        question = external_question(entry_url, options.frame_height)
        sizes = options.hit_sizes()
        for index, size in enumerate(sizes):
            try:
                answer = _call(
                    client,
                    "CreateHITWithHITType",
                    HITTypeId=publication.external_id,
                    MaxAssignments=size,
                    LifetimeInSeconds=options.lifetime_days * 24 * 3600,
                    Question=question,
                    RequesterAnnotation=f"cfannotate campaign {publication.campaign_id}"[:255],
                    # A retried request never creates the same HIT twice.
                    UniqueRequestToken=f"cfannotate-{publication.id}-{index}",
                )
            except PlatformError as error:
                raise PlatformError(
                    f"{index} of {len(sizes)} HITs were created; then {error.message}",
                    fix=error.fix,
                ) from None
            hit = answer["HIT"]
            MTurkHit.objects.create(
                publication=publication,
                hit_id=hit["HITId"],
                max_assignments=hit.get("MaxAssignments", size),
                status=hit.get("HITStatus", ""),
                assignments_available=hit.get("NumberOfAssignmentsAvailable", size),
                expires_at=hit.get("Expiration"),
            )

    # --- Review ---------------------------------------------------------------------------

    def _hit(self, assignment: Assignment, *, required: bool = True) -> MTurkHit | None:
        hit = (
            MTurkHit.objects.select_related("publication")
            .filter(
                hit_id=assignment.platform_task_id,
                publication__campaign_id=assignment.campaign_id,
                publication__platform=Platform.MTURK,
            )
            .first()
        )
        if hit is None and required:
            raise NotVerified(
                f"Assignment {assignment.id} did not come from one of this campaign's MTurk "
                "HITs; MTurk was not asked."
            )
        return hit

    def _verified(self, client, assignment: Assignment, *, check_code: bool) -> dict:
        """MTurk's record of the assignment, after checking it is the one we bound at entry."""
        if not assignment.platform_assignment_id:
            raise NotVerified(f"Assignment {assignment.id} has no MTurk assignment id.")
        answer = _call(client, "GetAssignment", AssignmentId=assignment.platform_assignment_id)
        remote = answer.get("Assignment", {})
        ours = assignment.platform_assignment_id
        if remote.get("WorkerId") != assignment.worker.external_id:
            raise NotVerified(
                f"MTurk says assignment {ours} is worker {remote.get('WorkerId')}'s, "
                f"not {assignment.worker.external_id}'s; nothing was done."
            )
        if remote.get("HITId") != assignment.platform_task_id:
            raise NotVerified(
                f"MTurk says assignment {ours} belongs to HIT {remote.get('HITId')}, "
                f"not {assignment.platform_task_id}; nothing was done."
            )
        if check_code:
            given = answer_fields(remote.get("Answer", "")).get(RESULT_FIELD, "")
            if not assignment.completion_code or given != assignment.completion_code:
                raise NotVerified(
                    f"The answer MTurk holds for assignment {ours} does not carry this "
                    "assignment's completion code: it was submitted without finishing the "
                    "task here. Nothing was done."
                )
        return remote

    def approve(self, *, assignment: Assignment, feedback: str) -> ActionResult:
        client = mturk_client(sandbox=self._hit(assignment).publication.sandbox)
        remote = self._verified(client, assignment, check_code=True)
        status = remote.get("AssignmentStatus")
        if status == "Approved":
            return ActionResult(response={"AssignmentStatus": status, "already": True})
        params = {"AssignmentId": assignment.platform_assignment_id}
        if feedback:
            params["RequesterFeedback"] = feedback
        if status == "Rejected":
            params["OverrideRejection"] = True  # MTurk allows this within 30 days
        answer = _call(client, "ApproveAssignment", **params)
        return ActionResult(request_id=_request_id(answer), response=_without_metadata(answer))

    def reject(self, *, assignment: Assignment, feedback: str) -> ActionResult:
        client = mturk_client(sandbox=self._hit(assignment).publication.sandbox)
        remote = self._verified(client, assignment, check_code=False)
        status = remote.get("AssignmentStatus")
        if status == "Rejected":
            return ActionResult(response={"AssignmentStatus": status, "already": True})
        if status != "Submitted":
            raise NotVerified(
                f"MTurk shows assignment {assignment.platform_assignment_id} as {status}; "
                "only a submitted assignment can be rejected."
            )
        answer = _call(
            client,
            "RejectAssignment",
            AssignmentId=assignment.platform_assignment_id,
            RequesterFeedback=feedback,
        )
        return ActionResult(request_id=_request_id(answer), response=_without_metadata(answer))

    def bonus(
        self,
        *,
        assignment: Assignment,
        amount: Decimal,
        reason: str,
        unique_token: str,
        known_payments: int | None,
    ) -> ActionResult:
        client = mturk_client(sandbox=self._hit(assignment).publication.sandbox)
        remote = self._verified(client, assignment, check_code=True)
        status = remote.get("AssignmentStatus")
        if status not in {"Submitted", "Approved"}:
            raise NotVerified(
                f"MTurk shows assignment {assignment.platform_assignment_id} as {status}; "
                "a bonus is paid on submitted or approved work only."
            )
        amount_text = f"{amount:.2f}"
        if known_payments is not None and self._paid_since(
            client, assignment, amount_text, known_payments
        ):
            return ActionResult(response={"already_paid": True, "BonusAmount": amount_text})
        answer = _call(
            client,
            "SendBonus",
            WorkerId=remote["WorkerId"],
            BonusAmount=amount_text,
            AssignmentId=assignment.platform_assignment_id,
            Reason=reason,
            UniqueRequestToken=unique_token,
        )
        return ActionResult(request_id=_request_id(answer), response=_without_metadata(answer))

    def _paid_since(self, client, assignment: Assignment, amount: str, known: int) -> bool:
        """Did an earlier, unanswered try go through? MTurk lists more such bonuses than we know."""
        payments, token = [], None
        while True:
            params = {"AssignmentId": assignment.platform_assignment_id, "MaxResults": 100}
            if token:
                params["NextToken"] = token
            answer = _call(client, "ListBonusPayments", **params)
            payments.extend(answer.get("BonusPayments", []))
            token = answer.get("NextToken")
            if not token:
                break
        same = [
            payment
            for payment in payments
            if payment.get("WorkerId") == assignment.worker.external_id
            and Decimal(str(payment.get("BonusAmount", "0"))) == Decimal(amount)
        ]
        return len(same) > known

    def block(self, *, worker: Worker, reason: str) -> ActionResult:
        # A block is account-wide on MTurk; the live requester account is the one that pays.
        sandbox = not Publication.objects.filter(
            platform=Platform.MTURK,
            sandbox=False,
            campaign__assignments__worker=worker,
        ).exists()
        answer = _call(
            mturk_client(sandbox=sandbox),
            "CreateWorkerBlock",
            WorkerId=worker.external_id,
            Reason=reason,
        )
        return ActionResult(request_id=_request_id(answer), response={"sandbox": sandbox})

    # --- Status ---------------------------------------------------------------------------

    def sync(self, *, publication: Publication) -> SyncReport:
        report = SyncReport()
        client = mturk_client(sandbox=publication.sandbox)
        now = timezone.now()
        statuses = []
        for hit in publication.hits.all():
            remote = _call(client, "GetHIT", HITId=hit.hit_id).get("HIT", {})
            hit.status = remote.get("HITStatus", hit.status)
            hit.assignments_available = remote.get("NumberOfAssignmentsAvailable", 0)
            hit.assignments_pending = remote.get("NumberOfAssignmentsPending", 0)
            hit.assignments_completed = remote.get("NumberOfAssignmentsCompleted", 0)
            hit.expires_at = remote.get("Expiration", hit.expires_at)
            hit.synced_at = now
            hit.save()
            statuses.append(hit.status)
            report.updated += 1
            for remote_assignment in self._assignments_of(client, hit.hit_id):
                report.checked += 1
                self._sync_assignment(publication, remote_assignment, report)
        publication.status = ", ".join(sorted(set(statuses)))[:40]
        publication.synced_at = now
        publication.save(update_fields=["status", "synced_at"])
        return report

    def _assignments_of(self, client, hit_id: str) -> list[dict]:
        found, token = [], None
        while True:
            params = {"HITId": hit_id, "MaxResults": 100}
            if token:
                params["NextToken"] = token
            answer = _call(client, "ListAssignmentsForHIT", **params)
            found.extend(answer.get("Assignments", []))
            token = answer.get("NextToken")
            if not token:
                return found

    def _sync_assignment(self, publication: Publication, remote: dict, report: SyncReport):
        remote_id = remote.get("AssignmentId", "")
        local = (
            Assignment.objects.select_related("worker")
            .filter(campaign_id=publication.campaign_id, platform_assignment_id=remote_id)
            .first()
        )
        if local is None:
            report.problems.append(
                f"MTurk assignment {remote_id} (worker {remote.get('WorkerId')}) was submitted "
                "but never entered the task here: reject it."
            )
            return
        if local.worker.external_id != remote.get("WorkerId"):
            report.problems.append(
                f"MTurk assignment {remote_id} is worker {remote.get('WorkerId')}'s, but "
                f"entered here as {local.worker.external_id}: do not pay it before checking."
            )
            return
        if local.state != AssignmentState.SUBMITTED:
            report.problems.append(
                f"MTurk assignment {remote_id} was submitted on MTurk but is "
                f"{local.get_state_display().lower()} here."
            )
        decisions = {"Approved": ReviewDecision.APPROVED, "Rejected": ReviewDecision.REJECTED}
        decision = decisions.get(remote.get("AssignmentStatus"))
        if decision and getattr(getattr(local, "review", None), "decision", None) != decision:
            assignment_review_record(
                assignment=local,
                decision=decision,
                feedback=remote.get("RequesterFeedback", ""),
                at=remote.get("ApprovalTime") or remote.get("RejectionTime"),
            )
            report.reviews += 1
