"""The questions the morphology stage answers, declared before any test is run: each question is
one **multiple-testing family**, and the p-values of every test that answers it are adjusted
together by Benjamini-Hochberg.

Mielke et al. (2019) asked "what predicts a language's difficulty?" with many tests (one per
predictor and data set) and adjusted all of them as one family. The
stage does the same per question: a family is not cut smaller along models, sources, texts or
corpora, so a claim pays for every test that could have made a claim of the same kind. A row
belongs to the question whose ``member`` accepts it among the questions of its table, and to
exactly one (:func:`question_of` refuses a row that none or several accept). The id is written in
each row's ``test_family`` column: the multiple-testing family, not a language family (the
``*_family_*`` columns of :mod:`fairppl.morphology.regression` are about language families).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import polars as pl

from ..core.errors import InputError


@dataclass(frozen=True)
class Question:
    """One question the stage answers: ``id`` (the rows' ``test_family``), the question in
    words, the table whose rows answer it (its CSV's name under results/tables without
    ``.csv``), which rows those are in words, and ``member``, the same rule as a predicate over
    a row's keys."""

    id: str
    asks: str
    table: str
    rows: str
    member: Callable[[Mapping], bool]


#: The texts a regression of ``morphology.csv`` is on (as
#: :data:`fairppl.morphology.regression.TEXTS`; a test keeps the two equal).
REGRESSION_TEXTS = ("words", "lemmas", "difference", "marginal")
#: The responses of ``difficulty_predictors.csv``.
RESPONSES = ("difficulty", "bpec")

#: Every question, one multiple-testing family each.
QUESTIONS = (
    Question(
        id="morphology-cost",
        asks="Does a language's morphological complexity explain how costly its text is to "
             "model?",
        table="morphology",
        rows="every regression of BPEC on a morphology measure: every corpus, model, measure "
             "(MCC, forms per lemma), source and text (words, lemmas, the cost of inflection "
             "words - lemmas, the marginal BPEC); Cotterell et al.'s Figure 1, all panels",
        member=lambda row: row.get("text") in REGRESSION_TEXTS),
    Question(
        id="difficulty-predictors",
        asks="What predicts how hard a language is to model: its morphology or simple "
             "statistics of its text?",
        table="difficulty_predictors",
        rows="every correlation of a response (difficulty, BPEC) with a predictor (each "
             "morphology measure and source, each property of the correlates table): every "
             "corpus and model",
        member=lambda row: row.get("response") in RESPONSES),
    Question(
        id="difficulty-agreement",
        asks="Do the difficulties rank the languages as BPEC on the common units does?",
        table="difficulty_agreement",
        rows="every model's rank correlation of difficulty with BPEC: every corpus",
        member=lambda row: True),
)

#: The questions by id.
BY_ID = {q.id: q for q in QUESTIONS}


def question_of(table: str, row: Mapping) -> Question:
    """The one question of ``table`` (e.g. ``"morphology"``) whose ``member`` accepts ``row``;
    InputError when none or several do (every test must be declared, once)."""
    matches = [q for q in QUESTIONS if q.table == table and q.member(row)]
    if len(matches) != 1:
        said = ", ".join(f"{k}={v!r}" for k, v in row.items())
        found = ("no declared question" if not matches else
                 f"{len(matches)} questions ({', '.join(q.id for q in matches)})")
        raise InputError(f"multiple testing: {found} of {table} takes the row {said}; declare "
                         f"one in fairppl.morphology.questions.QUESTIONS")
    return matches[0]


def pooled(table: pl.DataFrame, question: str, column: str) -> int:
    """How many tests the question ``question`` pooled in ``table``: its rows (``test_family``)
    with a p-value in ``column`` (an empty p-value is no test and is not counted)."""
    if "test_family" not in table.columns or column not in table.columns:
        return 0
    p = pl.col(column).cast(pl.Float64)
    return table.filter((pl.col("test_family") == question) & p.is_not_null()
                        & p.is_not_nan()).height


def describe(table: pl.DataFrame, question: str, column: str) -> str:
    """'the N tests of the question "..."' for a sentence, counted in ``table``."""
    n = pooled(table, question, column)
    tests = "one test" if n == 1 else f"{n} tests"
    return f'the {tests} of the question "{BY_ID[question].asks}"'
