"""Text shown to people: sentences that end once, whatever the names inside them end with,
and counts with the noun in the number they take."""

import re

_PERIODS_AT_END = re.compile(r"\.{2,}$")


def sentence(text: str) -> str:
    """`text` on one line with single spaces, ending with exactly one period (or its own
    ! or ?): a name or a platform's reason that ends with a period does not double it."""
    text = _PERIODS_AT_END.sub(".", " ".join(str(text).split()))
    return text if text.endswith((".", "!", "?")) else text + "."


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun` as a person writes them: "1 worker", "3 workers", "0 rounds";
    `plural` for nouns that do not take an s."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
