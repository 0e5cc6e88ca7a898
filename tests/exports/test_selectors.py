"""Row by row: what each export holds for a campaign labeled through the worker path."""

from cfannotate.campaigns.models import Original
from cfannotate.candidates.models import Candidate
from cfannotate.exports.selectors import (
    AUGMENTATION_COLUMNS,
    COUNTERFACTUAL_COLUMNS,
    JUDGMENT_COLUMNS,
    augmentation_rows,
    contrast_rows,
    edit_tokens,
    export_sizes,
    judgment_rows,
)
from cfannotate.quality.models import AggregatedLabel

NEGATION_EDIT = {
    "ops": [
        {"kind": "replace", "removed": "good", "added": "not good",
         "removed_tokens": ["good"], "added_tokens": ["not", "good"]},
        {"kind": "delete", "removed": "really", "added": "",
         "removed_tokens": ["really"], "added_tokens": []},
    ],
    "token_distance": 2,
    "relationship": {"removed": ["good", "really"], "added": ["not", "good"]},
}  # fmt: skip


def test_the_contrast_set_holds_kept_counterfactuals_whose_label_flips(labeled):
    a1, b1 = labeled.candidates["a1"], labeled.candidates["b1"]
    Candidate.objects.filter(pk=a1.pk).update(control_code="negation", edit=NEGATION_EDIT)
    Original.objects.filter(pk=labeled.originals["A"].pk).update(context="A fixed premise.")
    Candidate.objects.filter(pk=a1.pk).update(
        predicted_label=labeled.campaign.labels.get(value="positive"),
        predicted_confidence=0.75,
        prediction_source="uploaded",
    )
    original_a = labeled.originals["A"]

    rows = list(contrast_rows(labeled.campaign))

    assert [row["candidate_id"] for row in rows] == [a1.id, b1.id]
    assert rows[0] == {
        "original_id": original_a.external_id,
        "candidate_id": a1.id,
        "context": "A fixed premise.",
        "original_text": original_a.text,
        "text": a1.text,
        "original_label": "negative",
        "label": "positive",
        "generator": "polyjuice",
        "engine": "server",  # where it was made, from the candidate's metadata
        "model": "org/served-7b",
        "control_code": "negation",
        "removed_tokens": "good really",
        "added_tokens": "not good",
        "votes": 3,  # the filtered worker's vote is counted here ...
        "qualified_votes": 2,  # ... but not here
        "label_votes": {"negative": 0, "positive": 2},  # the qualified votes themselves
        "valid_votes": 2,
        "agreement": 1.0,
        "predicted_label": "positive",  # the classifier in the loop's, where it has one
        "predicted_confidence": 0.75,
    }
    assert (rows[1]["predicted_label"], rows[1]["predicted_confidence"]) == ("negative", 0.5)
    assert all(tuple(row) == COUNTERFACTUAL_COLUMNS for row in rows)


def test_the_augmentation_set_is_each_flipped_original_and_all_its_kept_counterfactuals(labeled):
    names = {candidate.id: name for name, candidate in labeled.candidates.items()}
    originals = {original.external_id: letter for letter, original in labeled.originals.items()}

    rows = list(augmentation_rows(labeled.campaign))

    assert [
        (
            names.get(row["candidate_id"], originals[row["original_id"]]),
            row["is_original"],
            row["flips_label"],
            row["label"],
        )
        for row in rows
    ] == [
        ("A", True, False, "negative"),
        ("a1", False, True, "positive"),
        ("a2", False, False, "negative"),  # kept without a flip: still augmentation data
        ("B", True, False, "negative"),
        ("b1", False, True, "positive"),
    ]  # a3/b3 invalid, b2 split, C never flips
    original_row = rows[0]
    assert original_row["text"] == original_row["original_text"] == labeled.originals["A"].text
    assert original_row["candidate_id"] is None and original_row["votes"] is None
    assert all(tuple(row) == AUGMENTATION_COLUMNS for row in rows)


def test_raw_judgments_are_every_submitted_real_judgment_with_its_worker(labeled):
    careful, hasty, steady = (labeled.workers[name] for name in ("careful", "hasty", "steady"))

    rows = list(judgment_rows(labeled.campaign))

    assert len(rows) == 27  # 9 counterfactuals, 3 workers each
    assert {row["round_kind"] for row in rows} == {"real"}
    assert all(tuple(row) == JUDGMENT_COLUMNS for row in rows)
    by_worker = {
        worker.external_id: [row for row in rows if row["worker_id"] == worker.external_id]
        for worker in (careful, hasty, steady)
    }
    assert {worker: len(worker_rows) for worker, worker_rows in by_worker.items()} == {
        careful.external_id: 9,
        hasty.external_id: 9,
        steady.external_id: 9,
    }
    assert {row["worker_qualified"] for row in by_worker[careful.external_id]} == {True}
    assert {row["worker_qualified"] for row in by_worker[hasty.external_id]} == {False}
    assert {row["round_seconds"] for row in by_worker[hasty.external_id]} == {5.0}
    assert {row["round_seconds"] for row in by_worker[steady.external_id]} == {40.0}

    a1 = labeled.candidates["a1"]
    careful_on_a1 = next(
        row for row in by_worker[careful.external_id] if row["candidate_id"] == a1.id
    )
    assert careful_on_a1["is_valid"] is True and careful_on_a1["label"] == "positive"
    assert careful_on_a1["kept"] is True and careful_on_a1["kept_label"] == "positive"
    assert (careful_on_a1["votes"], careful_on_a1["qualified_votes"]) == (3, 2)
    assert careful_on_a1["submitted_at"] > careful_on_a1["served_at"]
    assert careful_on_a1["expected_label"] is None
    b2 = labeled.candidates["b2"]
    split = [row for row in rows if row["candidate_id"] == b2.id]
    assert {(row["kept"], row["kept_label"]) for row in split} == {(False, None)}
    assert sorted(row["label"] for row in split) == ["negative", "positive", "positive"]


def test_gold_judgments_come_with_their_expected_answers_on_request(labeled):
    rows = list(judgment_rows(labeled.campaign, include_gold=True))

    gold = [row for row in rows if row["round_kind"] == "gold"]
    training = [row for row in rows if row["round_kind"] == "training"]
    assert len(gold) == 18  # 2 gold rounds of 3, 3 workers
    assert len(training) == 9  # 1 training round of 3, 3 workers
    assert len(rows) == 27 + 18 + 9
    assert all(row["expected_label"] is not None for row in training)
    assert {row["expected_valid"] for row in gold} == {True}
    hasty = labeled.workers["hasty"].external_id
    assert all(
        (row["label"] != row["expected_label"]) == (row["worker_id"] == hasty) for row in gold
    )
    assert {row["kept"] for row in gold} == {None}  # gold is not voted on


def test_nothing_is_exported_before_quality_control_has_voted(labeled):
    AggregatedLabel.objects.all().delete()
    assert list(contrast_rows(labeled.campaign)) == []
    assert list(augmentation_rows(labeled.campaign)) == []
    assert len(list(judgment_rows(labeled.campaign))) == 27


def test_the_sizes_count_what_each_export_streams(labeled):
    """The exports page's row counts: counted as the files select, not apart from them."""
    campaign = labeled.campaign
    sizes = export_sizes(campaign)
    assert sizes.contrast == len(list(contrast_rows(campaign))) == 2
    augmentation = list(augmentation_rows(campaign))
    assert (sizes.augmentation_originals, sizes.augmentation_counterfactuals) == (2, 3)
    assert sizes.augmentation == len(augmentation)
    assert sizes.judgments == len(list(judgment_rows(campaign))) == 27
    assert sizes.kept == 4 and sizes.candidates == campaign.candidates.count()
    assert sizes.labels_updated_at is not None

    AggregatedLabel.objects.all().delete()
    empty = export_sizes(campaign)
    assert (empty.kept, empty.contrast, empty.augmentation) == (0, 0, 0)
    assert empty.labels_updated_at is None


def test_edit_tokens_read_the_ops_and_tolerate_foreign_edits():
    assert edit_tokens(NEGATION_EDIT, "removed") == "good really"
    assert edit_tokens(NEGATION_EDIT, "added") == "not good"
    phrase_only = {"ops": [{"removed": "very good", "added": "bad"}]}
    assert edit_tokens(phrase_only, "removed") == "very good"
    assert edit_tokens(phrase_only, "added") == "bad"
    for foreign in ({}, None, [], {"ops": "x"}, {"ops": [None, 3]}):
        assert edit_tokens(foreign, "removed") == ""
