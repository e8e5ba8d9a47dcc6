"""The one redaction helper (support/redact.py): the secrets it holds and credential-shaped tokens become
[REDACTED], everything else stays verbatim."""

import pytest

from virtuebench.support.redact import REDACTED, Redactor

KEY = "sk-test-SECRET-123456789"


def test_the_key_is_replaced_wherever_it_occurs_and_nothing_else_changes():
    redactor = Redactor([KEY])
    assert redactor.text(f"key={KEY}; again {KEY}.") == f"key={REDACTED}; again {REDACTED}."
    assert redactor.text("A perfectly ordinary reply: {'refusal': 0}") == "A perfectly ordinary reply: {'refusal': 0}"
    assert redactor(f"x{KEY}y") == f"x{REDACTED}y"  # inside other text too


def test_the_bearer_form_and_header_values_are_redacted():
    redactor = Redactor([KEY])
    assert redactor.text(f"Authorization: Bearer {KEY}") == f"Authorization: Bearer {REDACTED}"
    assert (
        redactor.text(f'{{"headers": {{"Authorization": "Bearer {KEY}"}}}}') == f'{{"headers": {{"Authorization": "Bearer {REDACTED}"}}}}'
    )
    # Credentials the redactor was not given are caught by their shape.
    other = Redactor()
    assert other.text("authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload") == f"authorization: Bearer {REDACTED}"
    assert other.text("Authorization: Basic dXNlcjpwYXNzd29yZA==") == f"Authorization: Basic {REDACTED}"
    assert other.text("{'api-key': '0123456789abcdef0123'}") == f"{{'api-key': '{REDACTED}'}}"
    assert other.text("x-api-key: abcdef0123456789") == f"x-api-key: {REDACTED}"
    assert other.text("leaked sk-proj-AbCdEf0123456789xyz here") == f"leaked {REDACTED} here"


@pytest.mark.parametrize(
    "prose",
    [
        "Bearer authentication is what the API uses.",
        "The authorization: required before access.",
        "It is a risk-assessment-of-the-whole-plan.",
        "Bearer [REDACTED] stays as it is.",
    ],
)
def test_prose_that_merely_mentions_credentials_is_kept(prose):
    assert Redactor([KEY]).text(prose) == prose


def test_short_values_are_not_secrets():
    redactor = Redactor(["EMPTY", "abc", "", None, "1234567"])
    assert redactor.secrets == ()
    assert redactor.text("EMPTY abc 1234567") == "EMPTY abc 1234567"
    redactor.add("12345678")  # 8 characters: a secret
    assert redactor.text("pin 12345678") == f"pin {REDACTED}"


def test_none_and_empty_pass_through():
    redactor = Redactor([KEY])
    assert redactor.text(None) is None
    assert redactor.text("") == ""


def test_a_key_holding_json_escapes_is_redacted_in_json_too():
    key = 'pw-with"quote\\back-123456'
    redactor = Redactor([key])
    assert key not in redactor.text(key) and "with" not in redactor.text(key)
    escaped = '{"echo": "pw-with\\"quote\\\\back-123456"}'
    assert redactor.text(escaped) == f'{{"echo": "{REDACTED}"}}'


def test_the_longer_of_two_overlapping_secrets_goes_whole():
    redactor = Redactor(["pass-1234", "pass-1234-and-longer"])
    assert redactor.text("pass-1234-and-longer, pass-1234") == f"{REDACTED}, {REDACTED}"
