from cfannotate.labeling.highlight import ADDED, REMOVED, SAME, Segment, change_segments


def _render(segments):
    marks = {SAME: "{}", ADDED: "+[{}]", REMOVED: "-[{}]"}
    return "".join(marks[segment.kind].format(segment.text) for segment in segments)


def test_an_insertion_is_marked_added():
    assert change_segments("It is a great movie.", "It is not a great movie.") == [
        Segment(SAME, "It is "),
        Segment(ADDED, "not"),
        Segment(SAME, " a great movie."),
    ]


def test_replacements_and_deletions_keep_their_place():
    rendered = _render(change_segments("It is a great movie for kids.", "It is a terrible movie."))
    assert rendered == "It is a -[great] +[terrible] movie -[for kids]."


def test_unchanged_text_has_no_marks():
    assert _render(change_segments("Same words here.", "Same words here.")) == "Same words here."


def test_case_of_a_moved_sentence_start_is_not_a_change():
    rendered = _render(change_segments("The film was bad.", "Honestly, the film was bad."))
    assert rendered == "+[Honestly,] the film was bad."


def test_markup_is_text_not_html():
    segments = change_segments("A bold claim.", "A <script>alert(1)</script> claim.")
    # Segments carry raw text; the template escapes it (checked in the view tests).
    assert "".join(segment.text for segment in segments if segment.kind == ADDED).startswith(
        "<script>"
    )
