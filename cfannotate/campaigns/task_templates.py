"""Task templates: the label set, field names and instructions of each task type.

Display names for NLI follow Polyjuice Figure 5; causal strength follows the four
levels of the CSci corpus used by the causal-counterfactuals paper (seed 002 §3.1).
"""

from dataclasses import dataclass, field

from cfannotate.campaigns.models import TaskType


@dataclass(frozen=True)
class LabelTemplate:
    value: str
    display_name: str
    description: str = ""


@dataclass(frozen=True)
class TaskTemplate:
    task_type: str
    text_name: str
    context_name: str
    labels: tuple[LabelTemplate, ...]
    instructions: str = ""
    # Synonyms accepted on import, mapped to a label value.
    label_aliases: dict[str, str] = field(default_factory=dict)
    # The generators a new campaign of this task starts with (its `generators` setting);
    # empty: the site default, Polyjuice alone. A seed's generators written for the task's
    # labels come on next to Polyjuice, where their default labels are the template's.
    generators: tuple[dict, ...] = ()
    # What the new-campaign page says they are.
    generators_note: str = ""


VALIDITY_NOTE = (
    "A counterfactual is Valid when it is fluent: it reads like something a native "
    "English speaker could have written. Mark it Invalid when it is ungrammatical or "
    "makes no sense, and still give the label you think fits best."
)

TEMPLATES: dict[str, TaskTemplate] = {
    TaskType.SENTIMENT: TaskTemplate(
        task_type=TaskType.SENTIMENT,
        text_name="Sentence",
        context_name="",
        labels=(
            LabelTemplate("negative", "Negative", "The text expresses a negative opinion."),
            LabelTemplate("positive", "Positive", "The text expresses a positive opinion."),
        ),
        instructions=(
            "Each round shows a reference sentence with its sentiment, then three edited "
            "versions of it. The words that changed are highlighted. For each edited "
            "sentence, decide whether it is valid and which sentiment it expresses now. "
            + VALIDITY_NOTE
        ),
        label_aliases={"0": "negative", "1": "positive", "neg": "negative", "pos": "positive"},
    ),
    TaskType.NLI: TaskTemplate(
        task_type=TaskType.NLI,
        text_name="Hypothesis",
        context_name="Premise",
        labels=(
            LabelTemplate(
                "entailment",
                "Definitely True",
                "If the premise is true, the hypothesis must be true too.",
            ),
            LabelTemplate(
                "neutral",
                "May be True",
                "The premise neither confirms nor rules out the hypothesis.",
            ),
            LabelTemplate(
                "contradiction",
                "Definitely False",
                "If the premise is true, the hypothesis cannot be true.",
            ),
        ),
        instructions=(
            "Each round shows a premise and a reference hypothesis with its label, then "
            "three edited hypotheses. The premise never changes. For each edited hypothesis, "
            "decide whether it is valid and whether, given the premise, it is Definitely "
            "True, May be True or Definitely False. " + VALIDITY_NOTE
        ),
    ),
    TaskType.DUPLICATE_QUESTIONS: TaskTemplate(
        task_type=TaskType.DUPLICATE_QUESTIONS,
        text_name="Question 2",
        context_name="Question 1",
        labels=(
            LabelTemplate(
                "not_duplicate", "Non-duplicate", "The questions ask for different answers."
            ),
            LabelTemplate(
                "duplicate",
                "Duplicate",
                "Both questions would point to the same answer on a Q&A website.",
            ),
        ),
        instructions=(
            "Each round shows two questions with their label, then three edited versions "
            "of the second question. For each, decide whether it is valid and whether the "
            "two questions are now duplicates. " + VALIDITY_NOTE
        ),
        label_aliases={"0": "not_duplicate", "1": "duplicate"},
    ),
    TaskType.CAUSAL_STRENGTH: TaskTemplate(
        task_type=TaskType.CAUSAL_STRENGTH,
        text_name="Sentence",
        context_name="",
        labels=(
            LabelTemplate(
                "no_relationship",
                "No relationship",
                "The sentence states no relation, or states that there is none.",
            ),
            LabelTemplate("causal", "Causal", "One thing directly causes the other."),
            LabelTemplate(
                "conditional_causal",
                "Conditional causal",
                "A causal relation hedged by a condition or a modal (may, might, could).",
            ),
            LabelTemplate(
                "correlational",
                "Correlational",
                "The two things are associated, with no claim of causation.",
            ),
        ),
        instructions=(
            "Each round shows a sentence from a scientific abstract with its causal "
            "strength, then three edited versions. For each, decide whether it is valid and "
            "how strong a causal claim it makes now. " + VALIDITY_NOTE
        ),
        label_aliases={
            "0": "no_relationship",
            "1": "causal",
            "2": "conditional_causal",
            "3": "correlational",
        },
        # Seed 002's edits are written for these four labels: NEGATION turns a causal
        # sentence into no relationship, STRENGTHEN a conditional causal one into causal.
        generators=(
            {"name": "polyjuice"},
            {"name": "causal-negation"},
            {"name": "causal-strengthen"},
        ),
        generators_note=(
            "Generators: Polyjuice, and the causal negation and strengthening rules "
            "(causal → no relationship, conditional causal → causal)."
        ),
    ),
}


def template_for(task_type: str) -> TaskTemplate | None:
    """The template of a task type; None for custom tasks, whose labels the researcher gives."""
    return TEMPLATES.get(task_type)


def task_template_summaries() -> list[tuple[str, str, TaskTemplate | None]]:
    """(task type, display name, template or None for custom) in the order TaskType lists them."""
    return [(value, label, template_for(value)) for value, label in TaskType.choices]
