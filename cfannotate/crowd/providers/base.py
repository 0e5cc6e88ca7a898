"""The provider interface: what every crowd platform does for cfannotate.

Design note: `cfannotate/crowd/providers.md`. The labeling code never imports a
provider; it asks `cfannotate.crowd.providers` which origins may frame a worker page
and how a finished assignment is handed back.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import ClassVar, Literal

from cfannotate.core.exceptions import CfannotateError


class PlatformError(CfannotateError):
    """The platform refused a request, could not be reached, or answered nonsense.

    `fix` says in one sentence what the researcher can do about it (a setting, a form field,
    waiting); `fields` name the platform's refused fields when it said which.
    """

    status_code = 502

    def __init__(
        self, message: str, *, fields: dict[str, list[str]] | None = None, fix: str = ""
    ) -> None:
        super().__init__(message, fields=fields)
        self.fix = fix


class NotVerified(PlatformError):
    """The platform's record of a worker or assignment does not match ours: nothing was done."""

    status_code = 409


@dataclass(frozen=True)
class Preview:
    """The platform shows the task before a worker accepts it: nothing is claimed."""

    campaign: object


@dataclass(frozen=True)
class Started:
    """The worker entered: their assignment, new or resumed, bound to the platform's ids."""

    assignment: object


EntryOutcome = Preview | Started


@dataclass(frozen=True)
class Handback:
    """How the completion page gives the result back to the platform."""

    method: Literal["post", "get"]
    url: str
    label: str  # the button's text
    note: str  # one sentence above the button
    fields: dict[str, str] = field(default_factory=dict)
    origin: str = ""  # for a post: the origin the page's CSP must let the form reach
    # The completion code the platform accepts typed by hand (Prolific: the study's), shown
    # instead of the assignment's own; empty where the platform takes none.
    code: str = ""


@dataclass(frozen=True)
class ActionResult:
    """What the platform answered to an approve, reject, bonus or block."""

    request_id: str = ""
    response: dict = field(default_factory=dict)
    local_only: bool = False  # nothing was sent: the platform has no such action


def _counted(n: int, one: str, many: str, done: str) -> str:
    return f"{n} {one if n == 1 else many} {done}"


@dataclass
class SyncReport:
    """What a status sync found; `problems` are sentences for the researcher."""

    checked: int = 0
    updated: int = 0
    freed: int = 0  # assignments whose units went back to the pool
    reviews: int = 0  # decisions the platform made that we had not recorded
    problems: list[str] = field(default_factory=list)

    def merge(self, other: "SyncReport") -> None:
        self.checked += other.checked
        self.updated += other.updated
        self.freed += other.freed
        self.reviews += other.reviews
        self.problems.extend(other.problems)

    def summary(self) -> str:
        parts = [
            _counted(self.updated, "study or HIT", "studies or HITs", "refreshed"),
            _counted(self.checked, "submission", "submissions", "checked"),
        ]
        if self.freed:
            parts.append(
                _counted(self.freed, "abandoned assignment", "abandoned assignments", "freed")
            )
        if self.reviews:
            parts.append(
                _counted(self.reviews, "platform decision", "platform decisions", "recorded")
            )
        if self.problems:
            parts.append(_counted(len(self.problems), "problem", "problems", "found"))
        return ", ".join(parts) + "."


class Provider(ABC):
    """One crowd platform. Each method is one step of a worker's life cycle."""

    platform: ClassVar[str]

    # --- Entry: the platform's URL parameters become a worker and an assignment -------

    @abstractmethod
    def entry(self, *, source, params: Mapping[str, str]) -> EntryOutcome:
        """Read the platform's URL parameters; start, resume or preview.

        `source` is where the worker came in: a `Publication` or an `InvitationLink`.
        """

    # --- Framing and completion --------------------------------------------------------

    def frame_origins(self) -> list[str]:
        """Origins that may frame this platform's worker pages (none by default)."""
        return []

    @abstractmethod
    def handback(self, *, assignment) -> Handback | None:
        """How a submitted assignment goes back to the platform; None: show the code."""

    # --- Publishing ---------------------------------------------------------------------------

    def check_configured(self, *, sandbox: bool) -> None:
        """Raise PlatformError when this site lacks what publishing here needs (credentials,
        a token): checked before anything is recorded. Nothing is needed by default."""
        return None

    @abstractmethod
    def publish(self, *, publication, entry_url: str) -> None:
        """Create the platform's side of a publication (HITs, a study) for `entry_url`."""

    # --- Review: every method verifies with the platform before it acts -------------------

    @abstractmethod
    def approve(self, *, assignment, feedback: str) -> ActionResult: ...

    @abstractmethod
    def reject(self, *, assignment, feedback: str) -> ActionResult: ...

    @abstractmethod
    def bonus(
        self, *, assignment, amount: Decimal, reason: str, unique_token: str, retry: bool
    ) -> ActionResult:
        """Pay a bonus once per `unique_token`; `retry`: an earlier try may have gone through."""

    @abstractmethod
    def block(self, *, worker, reason: str) -> ActionResult: ...

    # --- Status ---------------------------------------------------------------------------

    @abstractmethod
    def sync(self, *, publication) -> SyncReport:
        """Bring our records in line with the platform's: counts, decisions, abandoned work."""

    def places_set(self, *, publication, total: int) -> ActionResult:
        """Let `total` workers in all take the publication (more than it lets in now)."""
        raise PlatformError(
            f"Publications on {self.platform} cannot take more workers from here.",
            fix="Publish again for more workers, or make an invitation link.",
        )


def plain(value):
    """A platform's answer as JSON the action log can store (dates as ISO text)."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
