"""Scope: empty means unknown, never everywhere; no inheritance; a missing dimension is named."""

from __future__ import annotations

import pytest

from memory import scope

MADRID = {"kind": "geo", "place": "madrid"}
SPAIN = {"kind": "geo", "place": "spain"}
MAY = {"kind": "calendar", "start": "2026-05-01", "end": "2026-05-31"}


def test_a_place_matches_itself_only():
    assert scope.fits([MADRID], [MADRID])
    assert not scope.fits([MADRID], [SPAIN])  # Madrid does not rise to Spain
    assert not scope.fits([SPAIN], [MADRID])


def test_a_day_fits_a_period_and_a_deadline():
    assert scope.fits([MAY], [{"kind": "calendar", "date": "2026-05-10"}])
    assert not scope.fits([MAY], [{"kind": "calendar", "date": "2026-06-10"}])
    assert scope.fits(
        [{"kind": "calendar", "deadline": "2026-05-10"}],
        [{"kind": "calendar", "date": "2026-05-01"}],
    )


def test_an_unbound_statement_is_not_excluded():
    assert scope.fits([], [MADRID])


def test_missing_names_the_dimension_the_answer_depends_on():
    assert scope.missing([[MADRID], []], []) == ["geo"]
    assert scope.missing([[MADRID, MAY]], [MADRID]) == ["calendar"]
    assert scope.missing([[]], []) == []


@pytest.mark.django_db
def test_a_place_bound_note_makes_the_answer_parameter_dependent(alice_api):
    alice_api.remember("В Мадриде я езжу на такси Cabify", scope=[MADRID])
    answer = alice_api.recall("На каком такси я езжу?", lang="en")
    assert answer["kind"] == "parameter_dependent"
    assert answer["answer"]["found"] is True
    assert answer["missing"] == [
        {
            "parameter": "scope",
            "dimension": "geo",
            "why": "The answer depends on the place, and the place is unknown: the notes are bound to madrid.",
        }
    ]

    here = alice_api.recall("На каком такси я езжу?", scope=[MADRID])
    assert here["kind"] == "affirmative"
    assert here["missing"] == []

    elsewhere = alice_api.recall(
        "На каком такси я езжу?", scope=[{"kind": "geo", "place": "paris"}]
    )
    assert elsewhere["answer"]["found"] is False
