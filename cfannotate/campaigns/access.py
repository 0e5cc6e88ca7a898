"""One guard for "this researcher owns this campaign", for pages and for the API.

Every URL with a `<campaign_id>` names one of the signed-in researcher's campaigns; for
any other id (someone else's, or one that does not exist) the answer is 404, never 403,
so that ids do not leak.

- Pages: `@campaign_owner_required` instead of `@login_required`; the view reads
  `request.campaign`.
- API: `OwnsCampaign`, one of the API's default permission classes
  (`settings.REST_FRAMEWORK`); the API view reads `self.campaign`.
"""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import Http404
from rest_framework.permissions import BasePermission

from cfannotate.campaigns.selectors import campaign_get_for_owner
from cfannotate.core.exceptions import NotFound


def campaign_owner_required(view):
    """Sign-in first (to the login page); then the URL's campaign must be the user's."""

    @wraps(view)
    def guarded(request, *args, **kwargs):
        try:
            request.campaign = campaign_get_for_owner(
                user=request.user, campaign_id=kwargs["campaign_id"]
            )
        except NotFound as error:
            raise Http404(error.message) from None
        return view(request, *args, **kwargs)

    return login_required(guarded)


class OwnsCampaign(BasePermission):
    """An API view under `campaigns/<campaign_id>/` gets `self.campaign`, or a 404."""

    def has_permission(self, request, view) -> bool:
        campaign_id = view.kwargs.get("campaign_id")
        if campaign_id is not None:
            view.campaign = campaign_get_for_owner(user=request.user, campaign_id=campaign_id)
        return True
