"""`{% campaign_section_nav %}`: the campaign's section navigation, on every page of a campaign.

`base.html` calls it on every page; it draws nothing unless the page is one of a campaign
(`campaign_owner_required` put `request.campaign` there), and marks the page's section.
"""

from django import template

from cfannotate.campaigns.sections import SECTIONS, section_of_route

register = template.Library()


@register.inclusion_tag("campaigns/_section_nav.html", takes_context=True)
def campaign_section_nav(context) -> dict:
    request = context.get("request")
    campaign = getattr(request, "campaign", None)
    if campaign is None:
        return {"campaign": None}
    match = request.resolver_match
    return {
        "campaign": campaign,
        "sections": SECTIONS,
        "current": section_of_route(match.url_name if match else None),
    }
