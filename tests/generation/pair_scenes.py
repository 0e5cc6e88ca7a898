"""Premise-hypothesis pairs whose label only the relation of the two sides tells: an
entailed hypothesis repeats its premise, a neutral one shares nothing with it. Used by
the pair-feature tests of the baseline and of its benchmark."""

SCENES = [
    ("A cat sleeps in the house.", "A cat sleeps."),
    ("Two kids swim in a lake.", "Kids swim."),
    ("A woman paints a wall.", "A woman paints."),
    ("The old man reads a paper.", "The man reads."),
    ("A chef cooks soup at night.", "A chef cooks soup."),
    ("Three girls dance on stage.", "Girls dance."),
    ("A pilot flies a plane over Paris.", "A pilot flies a plane."),
    ("Two dogs run on the beach.", "Dogs run."),
    ("A boy kicks a red ball.", "A boy kicks a ball."),
    ("An artist sings at a bar.", "An artist sings."),
]
UNRELATED = ["Someone buys shoes.", "People argue loudly.", "It is snowing outside."]
