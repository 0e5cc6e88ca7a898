import pytest

from cfannotate.core import worker_tokens as tokens
from cfannotate.core.exceptions import Forbidden


def test_assignment_token_round_trips():
    token = tokens.assignment_token(assignment_id=42, nonce="abc")
    claim = tokens.assignment_token_read(token)
    assert (claim.assignment_id, claim.nonce) == (42, "abc")


@pytest.mark.parametrize(
    "mangle", [lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"), lambda t: "x" + t, lambda t: ""]
)
def test_tampered_assignment_token_is_refused(mangle):
    token = tokens.assignment_token(assignment_id=42, nonce="abc")
    with pytest.raises(Forbidden, match="not valid"):
        tokens.assignment_token_read(mangle(token))


def test_a_join_token_is_not_an_assignment_token():
    with pytest.raises(Forbidden):
        tokens.assignment_token_read(tokens.join_token(1))
    assert tokens.join_token_read(tokens.join_token(7)) == 7
    with pytest.raises(Forbidden):
        tokens.join_token_read(tokens.assignment_token(assignment_id=1, nonce="n"))


def test_form_token_is_bound_to_the_nonce():
    tokens.form_token_check("nonce-a", tokens.form_token("nonce-a"))
    for given in [None, "", tokens.form_token("nonce-b"), "0" * 64]:
        with pytest.raises(Forbidden, match="out of date"):
            tokens.form_token_check("nonce-a", given)


def test_nonces_are_unguessable():
    nonces = {tokens.new_nonce() for _ in range(100)}
    assert len(nonces) == 100 and all(len(nonce) >= 32 for nonce in nonces)


class _Bound:
    """Just what `assignment_binding` reads."""

    def __init__(self, assignment_id=1, platform_assignment_id="A1", task="H1", worker="AW1"):
        self.id, self.token_nonce = assignment_id, "nonce"
        self.platform_assignment_id, self.platform_task_id = platform_assignment_id, task
        self.worker = type("W", (), {"platform": "mturk", "external_id": worker})()


def test_a_worker_token_carries_the_bound_platform_ids():
    assignment = _Bound()
    token = tokens.worker_token(assignment)
    assert tokens.assignment_token_read(token).binding
    tokens.assignment_binding_check(token, assignment)
    for changed in (_Bound(platform_assignment_id="A2"), _Bound(task="H2"), _Bound(worker="AW2")):
        with pytest.raises(Forbidden, match="earlier assignment"):
            tokens.assignment_binding_check(token, changed)
    # Tokens minted before binding existed (no "b") keep working.
    plain = tokens.assignment_token(assignment_id=1, nonce="nonce")
    tokens.assignment_binding_check(plain, _Bound(platform_assignment_id="anything"))


def test_entry_and_link_tokens_are_their_own_kinds():
    assert tokens.entry_token_read(tokens.entry_token(5)) == 5
    assert tokens.link_token_read(tokens.link_token(6)) == 6
    for read, token in (
        (tokens.entry_token_read, tokens.link_token(5)),
        (tokens.link_token_read, tokens.entry_token(6)),
        (tokens.entry_token_read, tokens.join_token(7)),
        (tokens.link_token_read, "garbage"),
    ):
        with pytest.raises(Forbidden):
            read(token)


def test_a_resume_code_names_its_assignment_until_the_nonce_rotates():
    from types import SimpleNamespace

    from cfannotate.core.worker_tokens import resume_code, resume_code_matches, resume_code_parse

    assignment = SimpleNamespace(id=42, token_nonce="n1")
    code = resume_code(assignment)
    assert code.startswith("42-") and len(code) == 13
    assert resume_code_parse(f" {code.lower()[:5]} {code.lower()[5:]} ") == 42
    assert resume_code_matches(code.lower(), "n1") and not resume_code_matches(code, "n2")
    for malformed in ("", "42", "42-", "x-ABCDEFGHIJ", "42-ABCDEFGHI1", "4" * 13 + "-AAAAAAAAAA"):
        assert resume_code_parse(malformed) is None
    assert not resume_code_matches("42-é", "n1")  # non-ASCII is a wrong code, not a crash
