"""Parts of the campaign page that the apps above campaigns fill in.

campaigns never imports those apps. Each registers a function `(request, campaign) ->
context` in its `AppConfig.ready()` (candidates: generation and the candidates table;
labeling: workers and gold); the campaign page merges what they return, in the order
they were registered, which is the order of INSTALLED_APPS.
"""

from collections.abc import Callable

from django.http import HttpRequest

from cfannotate.campaigns.models import Campaign

PagePart = Callable[[HttpRequest, Campaign], dict]
_parts: list[PagePart] = []


def register(part: PagePart) -> PagePart:
    """Add a part to the campaign page (once, however often `ready()` runs)."""
    if part not in _parts:
        _parts.append(part)
    return part


def parts_context(request: HttpRequest, campaign: Campaign) -> dict:
    context: dict = {}
    for part in _parts:
        context |= part(request, campaign)
    return context
