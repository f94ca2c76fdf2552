"""Which languages get the closed-vocabulary word sweep: those written with spaces between words.

A "word" of the sweep is what lies between two spaces (``fairppl.ngram.word.words``). In a language
written without spaces between words (Chinese, Japanese, Thai, ...) that is a clause or a whole
verse, almost every test "word" is out of vocabulary, and the sweep measures nothing. The
decision is made from the data: the mean length of a whitespace token of the train split,

    chars_per_whitespace_token = (characters other than the space) / (whitespace tokens),

a ratio of sums over the train units. A language above ``max_chars_per_token`` is written
without spaces. Measured on the Bible's train split (KJV versification, default splits), the 20
languages written with spaces lie between 2.8 (Korean) and 6.6 (Turkish), Chinese is at 10.1 and
Japanese at 54.7; the default threshold 8.0 lies between them.

The workflow needs the decision when it builds the job graph, before the units exist, so the
config lists the languages without a sweep (``word_ngram.languages_without_spaces``) and a cheap
rule measures every language and fails unless the data agree with the list
(``word_sweep_decisions``); its table is one of the study's outputs.
"""

from __future__ import annotations

from typing import Iterable

import polars as pl

from ..core.errors import InputError

#: Columns of the decision table.
DECISION_COLUMNS = {
    "corpus": pl.String,
    "language": pl.String,
    "chars_per_whitespace_token": pl.Float64,
    "swept": pl.Boolean,
    "reason": pl.String,
}


def chars_per_whitespace_token(texts: Iterable[str]) -> float:
    """Characters other than the ASCII space per space-separated token, over all ``texts``
    (normalised units: single spaces between tokens); a ratio of sums. NaN without any token."""
    n_chars = n_tokens = 0
    for text in texts:
        if text:
            n_tokens += text.count(" ") + 1
            n_chars += len(text) - text.count(" ")
    return n_chars / n_tokens if n_tokens else float("nan")


def word_sweep_decisions(units: pl.DataFrame, without_spaces: Iterable[str],
                         max_chars_per_token: float, source: str = "config",
                         long_words: Iterable[str] = ()) -> pl.DataFrame:
    """One row per (corpus, language) of ``units`` (the prepared units tables: corpus, language,
    split, text): its train split's ``chars_per_whitespace_token``, whether it gets the word sweep
    (``swept``: not listed in ``without_spaces``) and why.

    ``long_words`` (``word_ngram.long_word_languages``) are written with spaces but have long
    words (polysynthetic languages such as Asháninka, 10.5 characters per token): swept although
    above ``max_chars_per_token``.

    Raises InputError, naming ``source`` (the config file), the key, each language and its
    measured figure, if the lists and the data disagree: a language listed without spaces, or
    with long words, at or below ``max_chars_per_token``, an unlisted one above it, one in both
    lists, or a language without train tokens.
    """
    without_spaces, long_words = set(without_spaces), set(long_words)
    train = units.filter(pl.col("split") == "train")
    rows, errors = [], []
    for (corpus, language), part in train.group_by(["corpus", "language"], maintain_order=True):
        value = chars_per_whitespace_token(part["text"])
        listed = language in without_spaces
        long = language in long_words
        where = f"corpus {corpus!r}, language {language!r}"
        if value != value:
            errors.append(f"{where}: no train tokens to measure")
        elif listed and long:
            errors.append(f"{where}: listed both in word_ngram.languages_without_spaces and in "
                          f"word_ngram.long_word_languages; expected one of them at most")
        elif long and value <= max_chars_per_token:
            errors.append(
                f"{where}: listed in word_ngram.long_word_languages, but its train split has "
                f"{value:.2f} characters per whitespace token (<= max_chars_per_token "
                f"{max_chars_per_token}): no exception is needed; remove it from the list")
        elif listed and value <= max_chars_per_token:
            errors.append(
                f"{where}: listed in word_ngram.languages_without_spaces, but its train split has "
                f"{value:.2f} characters per whitespace token (<= max_chars_per_token "
                f"{max_chars_per_token}): written with spaces; remove it from the list")
        elif not listed and not long and value > max_chars_per_token:
            errors.append(
                f"{where}: its train split has {value:.2f} characters per whitespace token "
                f"(> max_chars_per_token {max_chars_per_token}): written without spaces between "
                f"words; add it to word_ngram.languages_without_spaces (or, for a language "
                f"written with spaces whose words are long, to word_ngram.long_word_languages)")
        if listed:
            reason = (f"no word sweep: written without spaces ({value:.2f} > "
                      f"{max_chars_per_token} characters per whitespace token)")
        elif long:
            reason = (f"word sweep: written with spaces, long words ({value:.2f} > "
                      f"{max_chars_per_token} characters per whitespace token; "
                      f"word_ngram.long_word_languages)")
        else:
            reason = (f"word sweep: written with spaces ({value:.2f} <= {max_chars_per_token} "
                      f"characters per whitespace token)")
        rows.append((corpus, language, value, not listed, reason))
    if errors:
        raise InputError(f"{source}: the word sweep's language list disagrees with the data:\n  "
                         + "\n  ".join(errors))
    table = pl.DataFrame(rows, schema=DECISION_COLUMNS, orient="row")
    return table.sort(["corpus", "language"])
