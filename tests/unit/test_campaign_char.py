"""Campaigns whose unit of the game is the character (fairppl.shannon.outcomes, `fairppl campaign
truncations --unit`): a hand-made Chinese campaign's files written out by hand, the default unit
following the config's word_ngram.languages_without_spaces, earlier formats read as unit word,
the character bigram's round trip (truncations, bets, score) against eq. 7 worked by hand, and
the refusal of the word bettors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from fairppl.cli.app import main
from fairppl.core.errors import InputError
from fairppl.shannon.bigram import DiscountBigram
from fairppl.shannon.campaign import make_truncations, read_campaign
from fairppl.shannon.outcomes import (build_outcomes, chars, contexts, spaced, tokens,
                                      unit_outcomes)

# Character counts of the train split (spaces are no characters of the game): 天 3, 地 3,
# 人 2, 说 2, ： 1; V = 2 keeps 地 and 天 (equal counts: code-point order, U+5730 < U+5929).
TRAIN = ["天地人", "人说： 天地", "地说天"]
TEST = ["天说： 地", "人天"]


def _study(root: Path, spaceless=("xx",)) -> Path:
    rows = []
    texts = [("train", t) for t in TRAIN] + [("test", t) for t in TEST] + [("dev", "天地")]
    for language in ("xx", "yy"):
        for pos, (split, text) in enumerate(texts):
            rows.append({"corpus": "toy", "unit_id": f"{pos:03d}", "position": pos,
                         "language": language, "split": split, "text": text,
                         "english_reference": False})
    out = root / "results" / "corpus" / "toy"
    out.mkdir(parents=True)
    pl.DataFrame(rows).write_parquet(out / "units.parquet")
    (root / "config").mkdir()
    (root / "config" / "config.yaml").write_text(
        "corpora:\n  toy:\n    enabled: true\nshannon:\n  vocab_size: 2\nword_ngram:\n"
        f"  languages_without_spaces: [{', '.join(spaceless)}]\n", encoding="utf-8")
    return root


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main(["campaign", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out.strip(), out.err.strip()


def _truncations(capsys, language: str, out: str, *options) -> tuple[int, str, str]:
    """`fairppl campaign truncations` on the toy corpus in the current folder."""
    return _run(capsys, "truncations", "--corpus", "toy", "--language", language, "--out", out,
                *options)


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _written(camp: Path) -> tuple[list[str], list[tuple[str, str, str]]]:
    """A campaign folder's vocabulary.txt split at its newlines (the last item empty when the file
    ends with one), and per truncation (file order) its unit id, context and answer; the ids of
    both files checked to be t000001, t000002, ... in order."""
    truncations, key = _read_jsonl(camp / "truncations.jsonl"), _read_jsonl(camp / "key.jsonl")
    ids = [f"t{k:06d}" for k in range(1, len(truncations) + 1)]
    assert [t["id"] for t in truncations] == ids and [k["id"] for k in key] == ids
    outcomes = (camp / "vocabulary.txt").read_text(encoding="utf-8").split("\n")
    return outcomes, [(t["unit_id"], t["context"], k["word"]) for t, k in zip(truncations, key)]


@pytest.fixture
def study_root(tmp_path, monkeypatch) -> Path:
    root = _study(tmp_path / "study")
    monkeypatch.chdir(root)
    return root


def test_characters_and_contexts_by_hand():
    assert chars("起初， 神") == ["起", "初", "，", "神"]
    assert tokens("起初， 神", "char") == chars("起初， 神")
    assert tokens("起初， 神", "word") == ["起初，", "神"]
    assert spaced("起初， 神", "char") == "起 初 ， 神"
    # the space shows with the character after it, never at the end of a context
    assert contexts("起初， 神", "char") == ["", "起", "起初", "起初，", "起初， 神"]
    assert contexts("", "char") == [""]
    outcomes = build_outcomes(TRAIN, 2, unit="char")
    assert outcomes.labels == ("地", "天", "<unk>", "</s>")
    assert unit_outcomes("天说： 地", outcomes, "char") == ["天", "<unk>", "<unk>", "地", "</s>"]
    # a randomized draw cuts each unit at one of its characters (or its end), weighed by their
    # number
    units = [("u1", "天说： 地"), ("u2", "人天")]
    draw = make_truncations(units, outcomes, "randomized", 2, seed=0, unit="char")
    cuts = {uid: list(zip(contexts(text, "char"), unit_outcomes(text, outcomes, "char")))
            for uid, text in units}
    assert [t["unit_id"] for t in draw] == ["u1", "u2"]
    assert all((t["context"], t["word"]) in cuts[t["unit_id"]] for t in draw)
    # (2 units of 5 and 3 truncations, so s = 8 // 2 < 5: the length-weighted draw)
    assert [(t["scheme"], t["weight"]) for t in draw] == [("weighted", 5), ("weighted", 3)]
    with pytest.raises(InputError, match=r"^word 1 of the unit contains U\+3000"):
        chars("天 地\u3000人")  # an ideographic space: not a normalised unit
    with pytest.raises(InputError, match=r"^unit 'syllable': expected one of word, char$"):
        contexts("天", "syllable")
    with pytest.raises(InputError) as err:
        build_outcomes(TRAIN, 5, where="toy/xx", unit="char")
    assert str(err.value) == ("field 'shannon.vocab_size': 5 is not below the 5 character types "
                              "of the train split of toy/xx, so no train character is left out "
                              "and <unk> is never trained; expected a size below 5")


def test_a_char_campaign_written_out_by_hand(study_root, capsys):
    code, out, err = _truncations(capsys, "xx", "camp")
    assert code == 0, err
    assert out == ("wrote camp: 8 truncations of 2 units (exhaustive, toy/xx test), m = 4 "
                   "outcomes, unit char (xx is in word_ngram.languages_without_spaces of "
                   "config/config.yaml)")
    camp = study_root / "camp"
    # test units 003 "天说： 地" and 004 "人天"; the space shows with 地
    assert _written(camp) == (["地", "天", "<unk>", "</s>", ""], [
        ("003", "", "天"), ("003", "天", "<unk>"), ("003", "天说", "<unk>"),
        ("003", "天说：", "地"), ("003", "天说： 地", "</s>"),
        ("004", "", "<unk>"), ("004", "人", "天"), ("004", "人天", "</s>")])
    ids = [f"t00000{k}" for k in range(1, 9)]
    meta = json.loads((camp / "campaign.json").read_text(encoding="utf-8"))
    assert meta == {"format": "fairppl-campaign/3", "corpus": "toy", "language": "xx",
                    "unit": "char", "split": "test", "protocol": "exhaustive",
                    "scheme": "exhaustive", "n": None, "seed": 0, "vocab_size": 2,
                    "vocabulary_corpus": "toy", "m": 4, "n_truncations": 8, "n_units": 2}
    campaign = read_campaign(camp)
    assert campaign.unit == "char" and campaign.answers == (1, 2, 2, 0, 3, 2, 1, 3)
    # uniform bets score m = 4, as for words
    (study_root / "u.jsonl").write_text("".join(f'{{"id": "{i}", "bets": {{}}}}\n' for i in ids))
    code, out, err = _run(capsys, "score", camp, study_root / "u.jsonl", "--json")
    assert code == 0 and json.loads(out)["perplexity"] == pytest.approx(4, rel=1e-14)


def test_the_default_unit_follows_the_config_list(study_root, capsys):
    # yy is not listed: words (here whole units: "天说：" and "地")
    code, out, _ = _truncations(capsys, "yy", "y", "--vocab-size", "1")
    assert code == 0
    assert out.endswith("m = 3 outcomes, unit word (yy is not in "
                        "word_ngram.languages_without_spaces of config/config.yaml)")
    assert read_campaign(study_root / "y").unit == "word"
    assert [context for _, context, _ in _written(study_root / "y")[1]] == [
        "", "天说：", "天说： 地", "", "人天"]
    # --unit wins over the list, either way, and says so
    code, out, _ = _truncations(capsys, "xx", "w", "--unit", "word", "--vocab-size", "1")
    assert code == 0 and out.endswith("unit word (--unit)")
    code, out, _ = _truncations(capsys, "yy", "c", "--unit", "char")
    assert code == 0 and out.endswith("m = 4 outcomes, unit char (--unit)")
    # a rerun says unchanged, with the same unit
    code, out, _ = _truncations(capsys, "xx", "w", "--unit", "word", "--vocab-size", "1")
    assert code == 0 and out.startswith("unchanged (same settings and files): w: ")
    # the other unit on the same folder is other settings
    code, _, err = _truncations(capsys, "xx", "w", "--vocab-size", "1")
    assert code == 2
    assert err == ("error: w: an earlier campaign with other settings (unit 'word' there, "
                   "'char' now): expected a new or empty folder, or the same settings")
    # a list that is no list is named
    (study_root / "config" / "config.yaml").write_text(
        "shannon:\n  vocab_size: 2\nword_ngram:\n  languages_without_spaces: zho\n")
    code, _, err = _truncations(capsys, "xx", "z")
    assert code == 2
    assert err == ("error: config/config.yaml: word_ngram.languages_without_spaces = 'zho': "
                   "expected a list of language ids")


def test_earlier_formats_read_as_unit_word_and_a_bad_unit_is_named(study_root, capsys):
    assert _truncations(capsys, "xx", "old", "--unit", "word", "--vocab-size", "1")[0] == 0
    meta_path = study_root / "old" / "campaign.json"
    settings = json.loads(meta_path.read_text(encoding="utf-8"))

    def rewrite(**changes):  # campaign.json with these fields (None: left out)
        fields = {k: v for k, v in (settings | changes).items() if v is not None}
        meta_path.write_text(json.dumps(fields), encoding="utf-8")

    rewrite(format="fairppl-campaign/2", unit=None)
    campaign = read_campaign(study_root / "old")
    assert campaign.unit == "word" and campaign.settings["unit"] == "word"
    # a /2 folder is not rewritten in /3, even with the same settings
    code, _, err = _truncations(capsys, "xx", "old", "--unit", "word", "--vocab-size", "1")
    assert code == 2
    assert err == ("error: old: an earlier campaign of format fairppl-campaign/2 (this version "
                   "writes fairppl-campaign/3): its truncations may be out already, so it is "
                   "not rewritten; expected a new or empty folder")
    rewrite(unit="syllable")
    with pytest.raises(InputError) as err:
        read_campaign(study_root / "old")
    assert str(err.value) == (f"{meta_path}: field 'unit' is 'syllable': expected one of "
                              f"word, char")
    # a char campaign whose vocabulary holds a word is refused at its line
    rewrite(unit="char")
    (study_root / "old" / "vocabulary.txt").write_text("天地\n<unk>\n</s>\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_campaign(study_root / "old")
    assert str(err.value) == (f"{study_root / 'old' / 'vocabulary.txt'}, line 1: '天地' is not one "
                              f"character: expected a character per line before '<unk>' and "
                              f"'</s>' (the campaign's unit is char)")


def test_char_bigram_round_trip_gives_its_likelihood(study_root, capsys):
    assert _truncations(capsys, "xx", "camp")[0] == 0
    code, out, err = _run(capsys, "bets", "--model", "bigram-eq7", "camp", "--alpha", "0.5",
                          "--out", "b.jsonl")
    assert code == 0, err
    assert out == ("wrote b.jsonl: 8 bets records (alpha 0.5, over characters; lists of all of "
                   "m = 4 outcomes)")
    code, out, err = _run(capsys, "score", "camp", "b.jsonl", "--json")
    assert code == 0, out + err
    scored = json.loads(out)
    # Eq. 7 by hand on the train characters (<s> ... </s>, U = <unk>): the bigrams are
    # <s>天 <s>U <s>地 天地(2) 天</s> 地U(2) 地</s> U</s> UU(2) U天(2), D = 10 distinct;
    # C(<s>) = 3, C(天) = 3, C(地) = 3, C(U) = 5; D(*地) = 2, D(*天) = 2, D(*U) = 3,
    # D(*</s>) = 3. With alpha = 1/2, p(v | u) = (max(C(uv) - 1/2, 0) + D(u*) D(*v) / 20) / C(u).
    # "天说： 地": 天|<s>, U|天, U|U, 地|U, </s>|地; "人天": U|<s>, 天|U, </s>|天.
    probs = [(0.5 + 0.3) / 3, 0.3 / 3, (1.5 + 0.45) / 5, 0.3 / 5, (0.5 + 0.3) / 3,
             (0.5 + 0.45) / 3, (1.5 + 0.3) / 5, (0.5 + 0.3) / 3]
    by_hand = math.exp(-math.fsum(map(math.log, probs)) / 8)
    outcomes = read_campaign(study_root / "camp").outcomes
    model = DiscountBigram.fit([spaced(t, "char") for t in TRAIN], outcomes, 0.5)
    assert model.perplexity([spaced(t, "char") for t in TEST]) == pytest.approx(by_hand,
                                                                                 rel=1e-12)
    assert scored["n_scored"] == 8 and scored["n_flagged"] == 0
    assert scored["perplexity"] == pytest.approx(by_hand, rel=1e-9)
    # the bets of t000004 (context "天说：", history ：, an <unk>) are p(. | U)
    record = _read_jsonl(study_root / "b.jsonl")[3]
    assert record["id"] == "t000004"
    assert record["bets"] == pytest.approx({"地": 0.3 / 5, "天": 1.8 / 5, "<unk>": 1.95 / 5,
                                            "</s>": (0.5 + 0.45) / 5}, rel=1e-12)


def test_word_bettors_are_refused_on_a_char_campaign(study_root, capsys):
    assert _truncations(capsys, "xx", "camp")[0] == 0
    (study_root / "word-v2.o3.kenlm").write_text("not read\n")
    (study_root / "hf").mkdir()
    code, _, err = _run(capsys, "bets", "--model", "word-v2.o3.kenlm", "camp", "--out", "k.jsonl")
    assert code == 2
    assert err == ("error: word-v2.o3.kenlm: a KenLM word n-gram bets on words, and this "
                   "campaign's unit is char (camp): the study has no character bettor of that "
                   "kind yet; expected bigram-eq7 (the eq. 7 bigram over characters)")
    code, _, err = _run(capsys, "bets", "--model", "hf", "camp", "--out", "t.jsonl")
    assert code == 2
    assert err == ("error: hf: a transformers folder bets on words, and this campaign's unit "
                   "is char (camp): the study has no character bettor of that kind yet; "
                   "expected bigram-eq7 (the eq. 7 bigram over characters)")
    assert not (study_root / "k.jsonl").exists() and not (study_root / "t.jsonl").exists()
