"""Text shown to people: sentences that end once, whatever the names inside them end with."""

import re

_PERIODS_AT_END = re.compile(r"\.{2,}$")


def sentence(text: str) -> str:
    """`text` on one line with single spaces, ending with exactly one period (or its own
    ! or ?): a name or a platform's reason that ends with a period does not double it."""
    text = _PERIODS_AT_END.sub(".", " ".join(str(text).split()))
    return text if text.endswith((".", "!", "?")) else text + "."
