import pytest

from cfannotate.core.exceptions import Forbidden
from cfannotate.crowd import tokens


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
