"""The Polyjuice prompt vocabulary (Polyjuice §3.2, Figure 2) and the eight control codes (Table 1).

A prompt reads `x <|perturb|> [code] blanked-x̂ [SEP]` and the model answers
`a1 [ANSWER] a2 [ANSWER]`, one answer per [BLANK]; `[EMPTY]` deletes the blank.
"""

PERTURB = "<|perturb|>"
BLANK = "[BLANK]"
SEP = "[SEP]"
ANSWER = "[ANSWER]"
EMPTY = "[EMPTY]"

SPECIAL_TOKENS = (PERTURB, BLANK, SEP, ANSWER, EMPTY)

NEGATION = "negation"
QUANTIFIER = "quantifier"
SHUFFLE = "shuffle"
LEXICAL = "lexical"
RESEMANTIC = "resemantic"
INSERT = "insert"
DELETE = "delete"
RESTRUCTURE = "restructure"
# Appendix A.2: a change no code describes, or one too large to be a counterfactual.
GLOBAL = "global"

CONTROL_CODES = (NEGATION, QUANTIFIER, SHUFFLE, LEXICAL, RESEMANTIC, INSERT, DELETE, RESTRUCTURE)


def code_token(code: str) -> str:
    """The bracketed form of a control code as it appears in a prompt: `[negation]`."""
    return f"[{code}]"


CODE_TOKENS = tuple(code_token(code) for code in (*CONTROL_CODES, GLOBAL))
