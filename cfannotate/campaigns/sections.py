"""The sections of a campaign, each its own page, and which section each campaign route is in.

Every page of a campaign shows the same section navigation (`campaigns/_section_nav.html`,
drawn by the `campaign_section_nav` tag from `base.html`) with its own section marked.
Some sections are pages of campaigns (overview, data, generation, labeling, exports);
the others are the pages of the apps that do the work (review, gold, quality), named
here by URL name only, as templates name them.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    url_name: str


SECTIONS = (
    Section("overview", "Overview", "campaign-detail"),
    Section("data", "Data", "campaign-data"),
    Section("generation", "Generation", "campaign-generation"),
    Section("review", "Review", "candidate-review"),
    Section("gold", "Gold and training", "gold-page"),
    Section("labeling", "Labeling and platforms", "campaign-labeling"),
    Section("quality", "Quality", "quality-page"),
    Section("exports", "Exports", "campaign-exports"),
    Section("settings", "Settings", "campaign-settings"),
)
SECTION_BY_KEY = {section.key: section for section in SECTIONS}

# The route names of a section's pages and fragments, by their first word(s); a route
# rendered as a whole page (a fragment's URL opened without htmx) shows its section.
ROUTE_PREFIXES = (
    ("campaign-detail", "overview"),
    ("campaign-data", "data"),
    ("original-upload", "data"),
    ("campaign-generation", "generation"),
    ("run-", "generation"),
    ("candidate-import", "generation"),
    ("candidates-recent", "generation"),
    ("candidate", "review"),
    ("gold-", "gold"),
    ("campaign-labeling", "labeling"),
    ("labeling-", "labeling"),
    ("crowd-", "labeling"),
    ("quality-", "quality"),
    ("campaign-exports", "exports"),
    ("export-", "exports"),
    ("evaluation-", "exports"),
    ("campaign-settings", "settings"),
)

# Where each stage of `stages.campaign_stages` is done.
STAGE_SECTIONS = {
    "data": "data",
    "generation": "generation",
    "review": "review",
    "gold": "gold",
    "labeling": "labeling",
    "platforms": "labeling",
    "judgments": "labeling",
    "quality": "quality",
    "exports": "exports",
}


def section_of_route(url_name: str | None) -> str | None:
    for prefix, key in ROUTE_PREFIXES:
        if url_name and url_name.startswith(prefix):
            return key
    return None
