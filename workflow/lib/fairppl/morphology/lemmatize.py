"""Lemmatized copies of the multi-text with simplemma (the lemmatized control of Cotterell et al.
2018: the same models trained and scored on lemmas instead of word forms).

**Coverage.** :data:`SIMPLEMMA_CODES` maps the study's language ids to the simplemma 2.0.0
dictionary that lemmatizes them; :data:`NOT_COVERED` says, for each study language simplemma has
no dictionary for, why it is left out. A neighbouring language's dictionary is never used in its
place (Hindi's for Bengali, Malay's for Indonesian): it would lemmatize a few shared words and
leave the rest, a control that measures nothing. A language in neither table (a row added to the
sheet later) is not covered, with a reason saying so (:func:`lemmatizer_for`).

**Tokens.** A text is cut with simplemma's own word pattern (``simplemma.tokenizer.TOKREGEX``,
the one its dictionaries were built against: ``l'homme``, ``well-known`` and ``3,50`` stay one
token). A match holding at least one letter is a *word token* and is replaced by its lemma; every
other character (spaces, punctuation, digits, symbols the pattern skips) is kept exactly as it is,
so the lemmatized text differs from the original only inside word tokens.

**What simplemma returns, and the case rule.** ``Lemmatizer.lemmatize`` (non-greedy default
strategy: dictionary lookup of the form as written, then with its first letter's case flipped,
then its rules and affix decompositions) returns the dictionary's lemma, whose case is the
dictionary's (English ``The`` -> ``the``, ``LORD`` -> ``lord``, ``Was`` -> ``be``; German
``Häuser`` -> ``Haus``). A word it cannot lemmatize comes back unchanged, except in the languages
of simplemma's lowercase fallback (bg, es, hy, lt, lv, pt, sk, uk among them) where it comes back
lowercased (Spanish ``Xyzzyq`` -> ``xyzzyq``). The control should remove inflection, not case, so
:func:`restore_case` keeps the form's case: where the lemma equals the form ignoring case, the
form is kept as written (``The``, ``LORD``, an unknown ``Xyzzyq``); otherwise the lemma is used,
upper-cased where the form is all capitals of two or more letters, with its first letter
capitalised where the form's is (``Was`` -> ``Be``), and as the dictionary writes it otherwise.
**The English reference.** The derived corpus keeps ``english_reference`` on its English rows,
which are lemmatized too: a BPEC computed within the derived corpus divides by the *lemmatized*
English's characters (3.6% fewer than the original's on the Bible's test split). To compare words
and lemmas over the same denominator, divide both by the original English's characters, which the
base corpus holds under the same unit ids.

A lemma that is empty or holds whitespace would change the text's word boundaries: it is an
error naming the token, never kept silently (none of the 17 covered languages' Bible words
produces one).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ..config.design import LEMMA_SUFFIX
from ..core.errors import InputError

#: Name and version of the lemmatizer, as written in the tables.
LEMMATIZER = "simplemma 2.0.0"

#: Study language id -> simplemma dictionary code, for the languages simplemma 2.0.0 covers.
SIMPLEMMA_CODES: dict[str, str] = {
    "eng": "en", "fra": "fr", "spa": "es", "ita": "it", "por": "pt", "deu": "de", "ron": "ro",
    "pol": "pl", "rus": "ru", "ukr": "uk", "tur": "tr", "ara": "ar", "fas": "fa", "hin": "hi",
    "swa": "sw", "ind": "id", "tgl": "tl",
    # The other Europarl languages (config/europarl): simplemma has a dictionary for each.
    "bul": "bg", "ces": "cs", "dan": "da", "ell": "el", "est": "et", "fin": "fi", "hun": "hu",
    "lit": "lt", "lav": "lv", "nld": "nl", "slk": "sk", "slv": "sl", "swe": "sv",
}

#: Study language id -> why simplemma 2.0.0 does not lemmatize it.
NOT_COVERED: dict[str, str] = {
    "ben": "simplemma 2.0.0 ships no Bengali dictionary (no `bn` data file); Hindi's (`hi`) is "
           "another language and is not used in its place",
    "vie": "simplemma 2.0.0 ships no Vietnamese dictionary (no `vi` data file); Vietnamese words "
           "do not inflect, so its text is its own lemma sequence in any case",
    "zho": "simplemma 2.0.0 ships no Chinese dictionary (no `zh` data file), and Chinese is "
           "written without spaces between words, which simplemma's tokenizer needs to find words",
    "jpn": "simplemma 2.0.0 ships no Japanese dictionary (no `ja` data file), and Japanese is "
           "written without spaces between words, which simplemma's tokenizer needs to find words",
    "kor": "simplemma 2.0.0 ships no Korean dictionary (no `ko` data file)",
}


@dataclass(frozen=True)
class Coverage:
    """Whether ``language`` is lemmatized: its simplemma ``code`` or the ``reason`` it is not."""

    language: str
    covered: bool
    code: str | None
    reason: str


def lemmatizer_for(language: str) -> Coverage:
    """The coverage of one study language id (see the module docstring)."""
    if language in SIMPLEMMA_CODES:
        return Coverage(language, True, SIMPLEMMA_CODES[language], "")
    reason = NOT_COVERED.get(language)
    if reason is None:
        reason = (f"no entry for {language!r} in fairppl.morphology.lemmatize.SIMPLEMMA_CODES: "
                  f"add its simplemma code there if simplemma covers it")
    return Coverage(language, False, None, reason)


def restore_case(form: str, lemma: str) -> str:
    """The lemma written with the form's case (the rule of the module docstring)."""
    if lemma.casefold() == form.casefold():
        return form
    if len(form) > 1 and form.isupper():
        return lemma.upper()
    if form[:1].isupper() and lemma[:1].islower():
        return lemma[:1].upper() + lemma[1:]
    return lemma


def simplemma_factory():
    """A simplemma dictionary factory (its public ``DefaultDictionaryFactory``: the dictionaries
    shipped in ``simplemma/strategies/dictionaries/data/<code>.plzma``, lzma-compressed and
    front-coded, decoded into a form -> lemma mapping on first use) that keeps one dictionary."""
    from simplemma.strategies.dictionaries import DefaultDictionaryFactory

    return DefaultDictionaryFactory(cache_max_size=1)


def supported_codes() -> frozenset[str]:
    """The dictionary codes simplemma ships (one data file each)."""
    from simplemma.strategies.dictionaries.dictionary_factory import SUPPORTED_LANGUAGES

    return frozenset(SUPPORTED_LANGUAGES)


@dataclass
class Lemmatized:
    """A lemmatized text: ``text``, its word tokens ``n_tokens`` and how many changed."""

    text: str
    n_tokens: int
    n_changed: int


class TextLemmatizer:
    """Lemmatizes texts of one simplemma language, caching each word form's output."""

    def __init__(self, code: str):
        from simplemma import Lemmatizer
        from simplemma.strategies import DefaultStrategy
        from simplemma.tokenizer import TOKREGEX

        if code not in supported_codes():
            raise InputError(f"simplemma has no dictionary {code!r}: expected one of "
                             f"{', '.join(sorted(supported_codes()))}")
        self.code = code
        self._pattern = TOKREGEX
        # A factory of its own, holding this language's dictionary only (simplemma's shared one
        # keeps up to 8, over a gigabyte for the large ones) and freed with this object.
        strategy = DefaultStrategy(dictionary_factory=simplemma_factory())
        self._lemmatizer = Lemmatizer(lemmatization_strategy=strategy)
        self._cache: dict[str, str] = {}

    def word(self, form: str) -> str:
        """The output for one word token: its lemma in the form's case."""
        out = self._cache.get(form)
        if out is None:
            lemma = self._lemmatizer.lemmatize(form, self.code)
            if not lemma or any(ch.isspace() for ch in lemma):
                raise InputError(f"simplemma ({self.code}) lemmatizes {form!r} to {lemma!r}: "
                                 f"expected a non-empty lemma without whitespace")
            out = self._cache[form] = restore_case(form, lemma)
        return out

    def __call__(self, text: str) -> Lemmatized:
        """Lemmatize every word token of ``text``, keeping every other character."""
        pieces: list[str] = []
        n_tokens = n_changed = 0
        end = 0
        for match in self._pattern.finditer(text):
            token = match.group(0)
            pieces.append(text[end:match.start()])
            end = match.end()
            if any(ch.isalpha() for ch in token):
                out = self.word(token)
                n_tokens += 1
                n_changed += out != token
                pieces.append(out)
            else:
                pieces.append(token)
        pieces.append(text[end:])
        return Lemmatized("".join(pieces), n_tokens, n_changed)


def lemmatize_text(text: str, language: str) -> str:
    """``text`` of study language ``language`` lemmatized (InputError if it is not covered)."""
    cov = lemmatizer_for(language)
    if not cov.covered:
        raise InputError(f"language {language!r} is not lemmatized: {cov.reason}")
    return TextLemmatizer(cov.code)(text).text


def derived_name(corpus: str) -> str:
    """The name of ``corpus``'s lemmatized copy (``bible`` -> ``bible-lemmas``)."""
    return f"{corpus}{LEMMA_SUFFIX}"


UNIT_COLUMNS = ["corpus", "unit_id", "position", "language", "split", "text", "english_reference"]


def lemmatize_units(units: pl.DataFrame, *, progress: bool = True,
                    source: str = "units") -> tuple[pl.DataFrame, pl.DataFrame]:
    """Lemmatize a units table (the schema of :data:`UNIT_COLUMNS`, one corpus).

    Returns ``(lemmas, coverage)``: ``lemmas`` has the same columns, ``corpus`` renamed to its
    derived name, the rows of the covered languages only, in the input's order, with the same
    unit ids, positions, splits and ``english_reference`` and the text lemmatized; ``coverage``
    has one row per language of the input (corpus, language, lemmatizer, code, covered, reason,
    n_tokens, n_changed, share_changed: word tokens over every unit of the language, and the
    share of them whose text changed; null where not covered). InputError if a column is missing,
    the table holds several corpora, or its English reference language is not covered (BPEC needs
    it). ``progress`` shows a tqdm bar per language.
    """
    missing = [c for c in UNIT_COLUMNS if c not in units.columns]
    if missing:
        raise InputError(f"units table lacks columns {missing}: expected {UNIT_COLUMNS}",
                         path=source)
    corpora = units["corpus"].unique().to_list()
    if len(corpora) != 1:
        raise InputError(f"expected the units of one corpus, got {sorted(corpora)}", path=source)
    corpus = corpora[0]
    languages = units["language"].unique(maintain_order=True).to_list()
    refs = units.filter(pl.col("english_reference"))["language"].unique().to_list()
    for ref in refs:
        if not lemmatizer_for(ref).covered:
            raise InputError(f"the English reference language {ref!r} of corpus {corpus!r} is "
                             f"not lemmatized ({lemmatizer_for(ref).reason}): its lemmatized "
                             f"copy would have no reference for BPEC", path=source)
    from tqdm import tqdm

    texts = units["text"].to_list()
    langs = units["language"].to_list()
    out_texts: list[str | None] = [None] * len(texts)
    rows = []
    for language in languages:
        cov = lemmatizer_for(language)
        row = {"corpus": corpus, "language": language, "lemmatizer": LEMMATIZER,
               "code": cov.code, "covered": cov.covered, "reason": cov.reason,
               "n_tokens": None, "n_changed": None, "share_changed": None}
        if cov.covered:
            lemmatizer = TextLemmatizer(cov.code)
            index = [i for i, lang in enumerate(langs) if lang == language]
            n_tokens = n_changed = 0
            for i in tqdm(index, desc=f"{corpus}: lemmatizing {language}", unit="unit",
                          mininterval=2.0, disable=not progress):
                done = lemmatizer(texts[i])
                out_texts[i] = done.text
                n_tokens += done.n_tokens
                n_changed += done.n_changed
            row.update(n_tokens=n_tokens, n_changed=n_changed,
                       share_changed=n_changed / n_tokens if n_tokens else None)
        rows.append(row)
    coverage = pl.DataFrame(rows, schema={
        "corpus": pl.String, "language": pl.String, "lemmatizer": pl.String, "code": pl.String,
        "covered": pl.Boolean, "reason": pl.String, "n_tokens": pl.Int64, "n_changed": pl.Int64,
        "share_changed": pl.Float64})
    lemmas = (units.select(UNIT_COLUMNS)
              .with_columns(pl.Series("text", out_texts, dtype=pl.String),
                            pl.lit(derived_name(corpus)).alias("corpus"))
              .filter(pl.col("text").is_not_null()))
    return lemmas, coverage


def lemma_neural_languages(config: dict) -> list[str]:
    """The languages whose Transformers are retrained on lemmas: ``lemmas.neural_languages``, or
    where it is null, the neural block's languages that simplemma covers."""
    block = config.get("lemmas") or {}
    asked = block.get("neural_languages")
    if asked is None:
        return [lang for lang in config.get("neural", {}).get("languages", [])
                if lemmatizer_for(lang).covered]
    return list(asked)


def check_lemma_config(config: dict, languages: list, source: str = "config") -> None:
    """The ``lemmas`` block against the language sheet (``languages``: rows with ``corpus`` and
    ``language``): every language of :func:`lemma_neural_languages` is lemmatized (a language
    simplemma does not cover has no lemmatized text to train on: InputError with the reason) and
    has a row in each corpus of ``lemmas.corpora`` that trains models."""
    block = config.get("lemmas") or {}
    corpora = [c for c in block.get("corpora") or []
               if not config["corpora"].get(c, {}).get("models_from")]
    for language in lemma_neural_languages(config):
        cov = lemmatizer_for(language)
        if not cov.covered:
            raise InputError(f"field 'lemmas.neural_languages': {language!r} is not lemmatized "
                             f"({cov.reason}); expected languages simplemma covers: "
                             f"{', '.join(SIMPLEMMA_CODES)}", path=source)
        for corpus in corpora:
            if not any(r.corpus == corpus and r.language == language for r in languages):
                raise InputError(f"field 'lemmas.neural_languages': {language!r} has no row for "
                                 f"corpus {corpus!r} in the language sheet; expected language "
                                 f"ids of {corpus} rows", path=source)
