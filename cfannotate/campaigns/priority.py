"""Model-in-the-loop priority for originals (Polyjuice §4.4): label where the model fails first.

The probabilities come from uploaded predictions, or from the built-in scikit-learn
baseline scored out of fold on the campaign's own originals. Units inherit their
original's priority, and workers are served higher-priority units first.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import OuterRef, Subquery

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.core.bulk import rows_update
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.text import counted


@dataclass(frozen=True)
class PrioritySummary:
    originals: int
    source: str  # "baseline" or "uploaded"
    wrong: int  # originals the model gets wrong
    mean_priority: float


def originals_prioritize(
    *, campaign: Campaign, predictions: Sequence[Mapping] | None = None
) -> PrioritySummary:
    """Set every original's priority from a model's predictions; returns what it found."""
    import numpy as np

    from generation.priority import BaselineClassifier, predictions_from_rows, priority_scores

    originals = list(campaign.originals.select_related("label").order_by("id"))
    if not originals:
        raise InvalidInput("The campaign has no originals to prioritize.")
    gold = [original.label.value for original in originals]
    if predictions is not None:
        label_order = list(campaign.labels.values_list("value", flat=True))
        try:
            by_id = predictions_from_rows(
                predictions, label_order, known_ids=[o.external_id for o in originals]
            )
        except ValueError as error:
            raise InvalidInput(
                f"The predictions are invalid: {error}", fields={"predictions": [str(error)]}
            ) from None
        missing = [o.external_id for o in originals if o.external_id not in by_id]
        if missing:
            raise InvalidInput(
                f"Predictions are missing for {counted(len(missing), 'original')}, "
                f"e.g. {missing[0]!r}.",
                fields={"predictions": [f"missing ids: {', '.join(missing[:10])}"]},
            )
        probabilities = np.stack([by_id[o.external_id] for o in originals])
        source = "uploaded"
    else:
        contexts = [o.context for o in originals] if campaign.is_pair_task else None
        try:
            model = BaselineClassifier()
            probabilities = model.out_of_fold_probabilities(
                [o.text for o in originals], gold, contexts=contexts
            )
        except ValueError as error:
            raise InvalidInput(f"The baseline cannot be trained here: {error}") from None
        label_order = [str(label) for label in model.classes_]
        source = "baseline"
    scores = priority_scores(gold, probabilities, label_order)
    predicted = [label_order[index] for index in probabilities.argmax(axis=1)]
    with transaction.atomic():
        for original, score in zip(originals, scores, strict=True):
            original.priority = float(score)
        rows_update(Original, ["priority"], [(o.pk, o.priority) for o in originals])
        # Every unit no worker holds takes its original's priority (an earlier budget
        # order's included): one UPDATE, as `labeling.ordering` undoes a budget order.
        campaign.units.filter(claims=0).update(
            priority=Subquery(
                Original.objects.filter(pk=OuterRef("original_id")).values("priority")[:1]
            )
        )
    return PrioritySummary(
        originals=len(originals),
        source=source,
        wrong=sum(p != g for p, g in zip(predicted, gold, strict=True)),
        mean_priority=float(scores.mean()),
    )
