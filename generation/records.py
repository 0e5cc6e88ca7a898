"""Plain records that cross the boundary between the web app and the generation library."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class OriginalRecord:
    """An original x: the perturbed text, the fixed context of a pair task, its label."""

    key: str
    text: str
    label: str
    context: str = ""


@dataclass(frozen=True)
class CandidateRecord:
    """A candidate counterfactual x̂ of one original, as a generator produced it."""

    original_key: str
    text: str
    generator: str
    control_code: str = ""
    intended_label: str | None = None
    prompt: str = ""
    metadata: dict = field(default_factory=dict)
