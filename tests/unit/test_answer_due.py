"""The answer due (``contract/requirements.py``): ``rules.json``'s ``chosen`` word read into the two
flags once, and the one judge of a refusal against it (``AnswerDue.misses``) that the scenario
runners and the traffic judge share."""

from __future__ import annotations

import pytest

from conformance.contract.requirements import (
    BODY_SCHEMA_ERROR,
    CHOSEN_CODE,
    CHOSEN_STATUS,
    CODE,
    REFUSED,
    STATUS,
    AnswerDue,
    Miss,
    answer_due,
)


@pytest.mark.parametrize(
    ("chosen", "status_stated", "code_stated"),
    [("", True, True), (CHOSEN_CODE, True, False), (CHOSEN_STATUS, False, False)],
)
def test_the_chosen_word_is_read_into_the_two_flags(
    chosen: str, status_stated: bool, code_stated: bool
) -> None:
    due = answer_due((400,), "FORMAT_ERROR", BODY_SCHEMA_ERROR, chosen)
    assert (due.status_stated, due.code_stated) == (status_stated, code_stated)
    assert due == AnswerDue((400,), "FORMAT_ERROR", status_stated, code_stated, BODY_SCHEMA_ERROR)


def test_an_unknown_chosen_word_is_refused() -> None:
    with pytest.raises(ValueError, match="chosen"):
        answer_due((400,), chosen="body")


def test_a_refusal_as_due_misses_nothing() -> None:
    assert AnswerDue((400,), "FORMAT_ERROR").misses(400, ["FORMAT_ERROR"]) == ()
    assert AnswerDue().misses(409, []) == ()  # any 4xx, no code


def test_an_acceptance_misses_the_refusal_and_the_status() -> None:
    due = answer_due((400,), "FORMAT_ERROR", chosen=CHOSEN_STATUS)
    assert due.misses(201, []) == (
        Miss(REFUSED, stated=True),
        Miss(STATUS, stated=False),
        Miss(CODE, stated=False),
    )


@pytest.mark.parametrize(("chosen", "stated"), [("", (True, True)), (CHOSEN_CODE, (True, False))])
def test_each_miss_is_stated_as_the_due_says(chosen: str, stated: tuple[bool, bool]) -> None:
    due = answer_due((401,), "CERTIFICATE_INVALID", chosen=chosen)
    assert due.misses(403, ["CONSENT_INVALID"]) == (
        Miss(STATUS, stated=stated[0]),
        Miss(CODE, stated=stated[1]),
    )
