"""The Europarl corpus type: the multi-text through English on a hand-made 3-language fixture
with known answers, the pair archives' errors, a checked download, and the start-up checks.
The profile of the full reproduction and the end-to-end run against pair archives served over
127.0.0.1: tests/workflow/test_europarl_workflow.py."""

from __future__ import annotations

import hashlib
import io
import tarfile

import polars as pl
import pytest
import yaml

from conftest import ROOT
from fairppl.core.errors import InputError
from fairppl.corpus.europarl import (
    DEFAULT_URL,
    align_pairs,
    extract_multitext,
    pair_url,
    read_multitext,
    read_pair,
)
from fairppl.corpus.prepare import prepare_units
from fairppl.corpus.url import download_url

# Pair de-en: a repeated English sentence (lines 3 and 5), an empty English side (4), an empty
# German side (6), surrounding spaces (7), a sentence only this pair has (8).
DE = [("Hello.", "Hallo."), ("Thanks.", "Danke."), ("Resumption.", "Wiederaufnahme."),
      ("", "Nur Deutsch."), ("Resumption.", "Wiederaufnahme der Sitzung."),
      ("Good night.", ""), ("  Yes. ", "Ja."), ("Only German.", "Nur im deutschen Paar.")]
# Pair fr-en: another order; "Resumption." is unique here but repeated in de-en, "Good night."
# complete here but empty in German, "No." and "Thanks!" absent from de-en.
FR = [("Thanks.", "Merci."), ("Yes.", "Oui."), ("Hello.", "Bonjour."),
      ("Resumption.", "Reprise de la session."), ("Good night.", "Bonne nuit."),
      ("No.", "Non."), ("Thanks!", "Merci !")]


def _pair(rows):
    return [en for en, _ in rows], [xx for _, xx in rows]


def test_alignment_through_english_has_the_known_units():
    texts, stats = align_pairs([("de", *_pair(DE)), ("fr", *_pair(FR))], "en")
    # Order and ids: the lines of de-en (the first pair in sorted order): 1, 2 and 7.
    ids = ["de-en:0000001", "de-en:0000002", "de-en:0000007"]
    assert texts == {
        "en": list(zip(ids, ["Hello.", "Thanks.", "Yes."])),
        "de": list(zip(ids, ["Hallo.", "Danke.", "Ja."])),
        "fr": list(zip(ids, ["Bonjour.", "Merci.", "Oui."])),
    }
    assert stats.to_dicts() == [
        {"pair": "de-en", "lines": 8, "empty_english": 1, "empty_foreign": 1,
         "duplicate_english": 2, "usable": 4, "common": 4},
        {"pair": "fr-en", "lines": 7, "empty_english": 0, "empty_foreign": 0,
         "duplicate_english": 0, "usable": 7, "common": 3},
    ]


def test_alignment_does_not_depend_on_the_order_pairs_are_read():
    forward, _ = align_pairs([("de", *_pair(DE)), ("fr", *_pair(FR))], "en")
    backward, _ = align_pairs([("fr", *_pair(FR)), ("de", *_pair(DE))], "en")
    assert forward == backward


def test_a_repeat_in_one_pair_drops_the_sentence_everywhere():
    fr = FR + [("Hello.", "Salut.")]  # "Hello." now twice in fr-en
    texts, _ = align_pairs([("de", *_pair(DE)), ("fr", *_pair(fr))], "en")
    assert [t for _, t in texts["en"]] == ["Thanks.", "Yes."]
    assert [u for u, _ in texts["fr"]] == ["de-en:0000002", "de-en:0000007"]
    # One pair alone: its own lines, ids from that pair.
    alone, _ = align_pairs([("fr", *_pair(FR))], "en")
    assert [u for u, _ in alone["en"]][:2] == ["fr-en:0000001", "fr-en:0000002"]
    assert len(alone["fr"]) == 7


def test_bad_pair_lists():
    with pytest.raises(InputError, match="no Europarl pair given"):
        align_pairs([], "en")
    with pytest.raises(InputError, match="de-en given twice"):
        align_pairs([("de", *_pair(DE)), ("de", *_pair(DE))], "en")
    with pytest.raises(InputError, match="line-aligned"):
        align_pairs([("de", ["a", "b"], ["x"])], "en")


def test_urls():
    assert pair_url("https://x.org/v7/{pair}.tgz", "fr", "en") == "https://x.org/v7/fr-en.tgz"
    assert pair_url("https://x.org/{iso1}/{pair}.tgz", "de", "en") == "https://x.org/de/de-en.tgz"
    with pytest.raises(InputError, match="neither"):
        pair_url("https://x.org/v7/fr-en.tgz", "fr", "en")
    with pytest.raises(InputError, match="only fields"):
        pair_url("https://x.org/{pair}/{lang}.tgz", "fr", "en")


def _tgz(path, pair, rows, *, drop=None, extra_line=None, folder=""):
    """A Europarl v7 pair archive of ``rows`` (english, foreign) at ``path``; ``drop`` leaves
    out the member of that language, ``extra_line`` appends a line to that language's file.
    Returns the archive's sha256."""
    iso1, pivot = pair.split("-")
    with tarfile.open(path, "w:gz") as tar:
        for lang, side in ((pivot, 0), (iso1, 1)):
            if lang == drop:
                continue
            lines = [row[side] for row in rows] + ([extra_line] if lang == iso1 and extra_line
                                                   else [])
            data = ("\n".join(lines) + "\n").encode("utf-8")
            info = tarfile.TarInfo(f"{folder}europarl-v7.{pair}.{lang}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_archives_extract_and_read_back(tmp_path):
    _tgz(tmp_path / "de-en.tgz", "de-en", DE)
    _tgz(tmp_path / "fr-en.tgz", "fr-en", FR, folder="training/")  # any folder is accepted
    english, german = read_pair(tmp_path / "de-en.tgz", "de")
    assert english[6] == "  Yes. " and german[3] == "Nur Deutsch." and len(german) == 8
    log = io.StringIO()
    table = extract_multitext({"fr": tmp_path / "fr-en.tgz", "de": tmp_path / "de-en.tgz"}, "en",
                              out=str(tmp_path / "m.parquet"),
                              stats_out=str(tmp_path / "pairs.tsv"), log=log)
    assert table.height == 9 and "de-en: 8 lines, 1 empty English" in log.getvalue()
    assert pl.read_csv(tmp_path / "pairs.tsv", separator="\t")["common"].to_list()[-1] == 3
    back = read_multitext(tmp_path / "m.parquet", {"fra": "fr", "eng": "en"})
    assert back == {"fra": [("de-en:0000001", "Bonjour."), ("de-en:0000002", "Merci."),
                            ("de-en:0000007", "Oui.")],
                    "eng": [("de-en:0000001", "Hello."), ("de-en:0000002", "Thanks."),
                            ("de-en:0000007", "Yes.")]}
    with pytest.raises(InputError, match=r"source id\(s\) \{'ita': 'it'\} not in the Europarl"):
        read_multitext(tmp_path / "m.parquet", {"ita": "it"})


def test_prepare_splits_the_multitext_by_position(tmp_path):
    rows = [(f"Sentence {i}.", f"Satz {i}.") for i in range(1, 41)]
    rows[3] = ("Sentence 2.", "Satz 2 wieder.")  # repeats line 2: lines 2 and 4 dropped
    _tgz(tmp_path / "de-en.tgz", "de-en", rows)
    extract_multitext({"de": tmp_path / "de-en.tgz"}, "en", out=str(tmp_path / "m.parquet"),
                      stats_out=str(tmp_path / "pairs.tsv"))
    spec = {"type": "europarl", "placeholder_patterns": []}
    scheme = {"block_size": 30, "dev_start": 1, "dev_end": 5, "test_start": 6, "test_end": 10}
    units, dropped = prepare_units("europarl", tmp_path / "m.parquet", spec,
                                   {"eng": "en", "deu": "de"}, scheme, "eng")
    deu = units.filter(language="deu")
    assert dropped.height == 0 and deu.height == 38
    # Position 0..37 among the multi-text's units: dev = lines 1, 3, 5, 6, 7; test = 8..12;
    # the second block starts at position 30 = line 33.
    assert deu.filter(split="dev")["unit_id"].to_list()[:6] == [
        "de-en:0000001", "de-en:0000003", "de-en:0000005", "de-en:0000006", "de-en:0000007",
        "de-en:0000033"]
    assert deu.filter(split="test")["text"].to_list()[:6] == [
        f"Satz {i}." for i in (8, 9, 10, 11, 12, 38)]
    # Positions 30..37 of the second block: 30..34 dev, 35..37 test.
    assert (deu.filter(split="dev").height, deu.filter(split="test").height) == (10, 8)


def test_archive_errors_name_the_file(tmp_path):
    _tgz(tmp_path / "de-en.tgz", "de-en", DE, drop="de")
    with pytest.raises(InputError, match=r"de-en\.tgz: member europarl-v7\.de-en\.de not found"):
        read_pair(tmp_path / "de-en.tgz", "de")
    _tgz(tmp_path / "fr-en.tgz", "fr-en", FR, extra_line="Une ligne de trop.")
    with pytest.raises(InputError, match=r"fr-en\.tgz: europarl-v7\.fr-en\.en has 7 lines and "
                                         r"europarl-v7\.fr-en\.fr has 8"):
        read_pair(tmp_path / "fr-en.tgz", "fr")
    with tarfile.open(tmp_path / "utf.tgz", "w:gz") as tar:
        for lang, data in (("en", b"One.\nTwo.\n"), ("fr", b"Un.\nDe\xffux.\n")):
            info = tarfile.TarInfo(f"europarl-v7.fr-en.{lang}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with pytest.raises(InputError, match=r"utf\.tgz:europarl-v7\.fr-en\.fr, line 2: invalid UTF-8"):
        read_pair(tmp_path / "utf.tgz", "fr")
    (tmp_path / "bad.tgz").write_bytes(b"not an archive")
    with pytest.raises(InputError, match="cannot read the archive"):
        read_pair(tmp_path / "bad.tgz", "fr")
    with pytest.raises(InputError, match="Europarl archive not found"):
        read_pair(tmp_path / "none.tgz", "fr")


def test_download_with_a_bad_checksum_keeps_nothing(tmp_path, http_dir):
    www, base = http_dir
    sha = _tgz(www / "de-en.tgz", "de-en", DE)
    wrong = ("0" if sha[0] != "0" else "1") + sha[1:]
    dest = tmp_path / "dl" / "de-en.tgz"
    dest.parent.mkdir()
    with pytest.raises(InputError, match=f"expected sha256 {wrong}, got {sha}"):
        download_url(f"{base}/de-en.tgz", wrong, str(dest))
    assert list(dest.parent.iterdir()) == []
    download_url(f"{base}/de-en.tgz", sha, str(dest))
    assert read_pair(dest, "de")[1][0] == "Hallo."
    with pytest.raises(InputError, match="expected a SHA-256 hex digest"):
        download_url(f"{base}/de-en.tgz", None, str(dest))


# --------------------------------------------------------------------------------------------
# Start-up checks of the config and the sheet
# --------------------------------------------------------------------------------------------

def _rows(tmp_path, lines):
    from fairppl.config.sheet import read_language_sheet

    path = tmp_path / "languages.tsv"
    path.write_text("corpus\tlanguage\tiso639_3\tname\tscript\tsource_id\tenglish_reference\n"
                    + "".join(lines), encoding="utf-8")
    return read_language_sheet(str(path), str(ROOT / "workflow" / "schemas"
                                              / "languages.schema.yaml"))


def test_startup_checks_name_the_pair_the_pivot_and_the_row(tmp_path):
    from fairppl.config.sheet import check_against_config

    good = ["europarl\teng\teng\tEnglish\tLatn\ten\ttrue\n",
            "europarl\tfra\tfra\tFrench\tLatn\tfr\tfalse\n",
            "europarl\tdeu\tdeu\tGerman\tLatn\tde\tfalse\n"]
    spec = {"enabled": True, "type": "europarl", "url": "http://x/{pair}.tgz", "pivot": "en",
            "sha256": {"fr-en": "a" * 64, "de-en": "b" * 64}}
    check_against_config(_rows(tmp_path, good), {"europarl": spec}, "languages.tsv")
    short = dict(spec, sha256={"fr-en": "a" * 64})
    with pytest.raises(InputError, match=r"`corpora.europarl.sha256` has no digest for the "
                                         r"pair\(s\) de-en"):
        check_against_config(_rows(tmp_path, good), {"europarl": short}, "languages.tsv")
    with pytest.raises(InputError, match=r"languages.tsv, line 2: corpus 'europarl': the English "
                                         r"reference's source_id is 'en' but `corpora.europarl."
                                         r"pivot` is 'fr'"):
        check_against_config(_rows(tmp_path, good), {"europarl": dict(spec, pivot="fr")},
                             "languages.tsv")
    bad = good[:2] + ["europarl\tdeu\tdeu\tGerman\tLatn\tdeu_Latn\tfalse\n"]
    with pytest.raises(InputError, match=r"line 4: field 'source_id': 'deu_Latn' for corpus "
                                         r"'europarl'; expected Europarl's 2-letter"):
        check_against_config(_rows(tmp_path, bad), {"europarl": spec}, "languages.tsv")
    # Disabled: nothing is checked (the default config's entry has no digests).
    check_against_config(_rows(tmp_path, good), {"europarl": dict(short, enabled=False)},
                         "languages.tsv")


def test_schema_wants_a_map_of_digests_and_a_pattern_url():
    from fairppl.config.settings import check_schema

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    schema = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    check_schema(cfg, schema, "config.yaml")  # the default config's disabled entry is valid
    for change, message in (
            ({"sha256": "a" * 64}, r"corpora.europarl.sha256': 'a+' is not of type 'object'"),
            ({"url": "https://www.statmt.org/europarl/v7/fr-en.tgz"},
             r"corpora.europarl.url': .* does not match"),
            ({"sha256": {"fr-en": "xyz"}}, "corpora.europarl.sha256"),
            ({"pivot": "English"}, "corpora.europarl.pivot")):
        bad = yaml.safe_load(yaml.safe_dump(cfg))
        bad["corpora"]["europarl"].update(change)
        with pytest.raises(InputError, match=message):
            check_schema(bad, schema, "config.yaml")


def test_url_may_be_left_out_for_the_default():
    """config/README.md gives Europarl's `url` a default: the schema accepts a block without it
    and the pair URLs are then the statmt.org archives."""
    from fairppl.config.settings import check_schema

    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    del cfg["corpora"]["europarl"]["url"]
    check_schema(cfg, str(ROOT / "workflow" / "schemas" / "config.schema.yaml"), "config.yaml")
    assert pair_url(None, "fr", "en") == "https://www.statmt.org/europarl/v7/fr-en.tgz"
    assert pair_url(None, "fr", "en") == pair_url(DEFAULT_URL, "fr", "en")
