"""Quality control's facts for the campaign overview (registered with `campaigns.stages` in
`QualityConfig.ready()`): how many counterfactuals it kept with a label."""

from cfannotate.campaigns.models import Campaign
from cfannotate.quality.models import AggregatedLabel


def quality_facts(campaign: Campaign) -> dict:
    kept = AggregatedLabel.objects.filter(candidate__campaign=campaign, kept=True).count()
    return {"labels_kept": kept}
