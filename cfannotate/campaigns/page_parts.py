"""Parts of the campaign's section pages that the apps above campaigns fill in.

campaigns never imports those apps. Each registers a function `(request, campaign) ->
context` for the sections that show it, in its `AppConfig.ready()` (candidates: generation
progress and the candidates table, on "generation"; labeling: the labeling block, on
"labeling"); a section page merges what its parts return, in the order they were
registered, which is the order of INSTALLED_APPS. A page computes only its own parts.
"""

from collections.abc import Callable, Iterable

from django.http import HttpRequest

from cfannotate.campaigns.models import Campaign

PagePart = Callable[[HttpRequest, Campaign], dict]
_parts: dict[str, list[PagePart]] = {}


def register(part: PagePart, *, sections: Iterable[str]) -> PagePart:
    """Add a part to the named section pages (once, however often `ready()` runs)."""
    for section in sections:
        registered = _parts.setdefault(section, [])
        if part not in registered:
            registered.append(part)
    return part


def parts_context(request: HttpRequest, campaign: Campaign, *, section: str) -> dict:
    context: dict = {}
    for part in _parts.get(section, ()):
        context |= part(request, campaign)
    return context
