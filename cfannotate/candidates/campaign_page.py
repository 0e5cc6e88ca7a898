"""The candidates' part of the campaign page: generation progress and the candidates table
(registered with `campaigns.page_parts` in `CandidatesConfig.ready()`)."""

from django.http import HttpRequest

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.selectors import (
    generation_overview,
    latest_run,
    recent_candidates,
    run_progress,
)


def campaign_page_context(request: HttpRequest, campaign: Campaign) -> dict:
    run = latest_run(campaign)
    return {
        "candidates": recent_candidates(campaign),
        "progress": run_progress(run) if run else None,
        "generation": generation_overview(campaign),
    }
