"""The crowd platforms behind one interface (`base.Provider`), and what worker pages ask of them.

Design note: `cfannotate/crowd/providers.md`.
"""

from django.conf import settings
from django.http import HttpResponse

from cfannotate.core.framing import allow_framing
from cfannotate.crowd.models import Platform
from cfannotate.crowd.providers.base import (
    ActionResult,
    Handback,
    NotVerified,
    PlatformError,
    Preview,
    Provider,
    Started,
    SyncReport,
)

__all__ = [
    "ActionResult",
    "Handback",
    "NotVerified",
    "PlatformError",
    "Preview",
    "Provider",
    "Started",
    "SyncReport",
    "all_frame_origins",
    "allow_platform_framing",
    "frame_origins",
    "handback_for",
    "provider_for",
]


def provider_for(platform: str) -> Provider:
    # Imported here: the providers import the labeling engine, which imports crowd models.
    from cfannotate.crowd.providers.links import LinkProvider
    from cfannotate.crowd.providers.mturk import MTurkProvider
    from cfannotate.crowd.providers.prolific import ProlificProvider

    providers = {
        Platform.MTURK: MTurkProvider,
        Platform.PROLIFIC: ProlificProvider,
        Platform.LINK: LinkProvider,
    }
    try:
        return providers[platform]()
    except KeyError:
        raise PlatformError(f"No crowd platform is called {platform!r}.") from None


def frame_origins(platform: str) -> list[str]:
    """Origins that may frame a worker page of this platform's workers."""
    return provider_for(platform).frame_origins()


def all_frame_origins() -> list[str]:
    """Every platform origin: for pages (errors) shown before we know the platform."""
    origins: list[str] = []
    for platform in Platform.values:
        origins.extend(o for o in frame_origins(platform) if o not in origins)
    return origins


def handback_for(assignment) -> Handback | None:
    """How the completion page returns a submitted assignment to its platform."""
    return provider_for(assignment.worker.platform).handback(assignment=assignment)


def public_base_url(request=None) -> str:
    """Where workers reach this site: CFANNOTATE_PUBLIC_URL, else the request's own host."""
    configured = settings.CROWD_PUBLIC_URL
    if configured:
        return configured.rstrip("/")
    if request is not None:
        return request.build_absolute_uri("/").rstrip("/")
    return ""


def allow_platform_framing(response: HttpResponse, *, platform: str | None) -> HttpResponse:
    """Let the platform's origins (all platforms' when unknown) frame a worker page.

    Pages of invitation-link workers keep denying all framing.
    """
    origins = frame_origins(platform) if platform else all_frame_origins()
    return allow_framing(response, origins=origins) if origins else response
