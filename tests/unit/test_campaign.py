"""The Shannon game as a campaign (fairppl.shannon.campaign, `fairppl campaign`): the files of a
campaign checked by hand, the scorer against hand-worked values and a known model's likelihood,
every kind of bad input flagged with its line, id and exact reason, and the exit statuses."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fairppl.cli.app import main
from fairppl.core.errors import InputError
from fairppl.shannon.campaign import (MIN_INTERVAL_UNITS, build_campaign, make_truncations,
                                      read_campaign, read_submission, score_submission,
                                      write_bets, write_campaign)
from fairppl.shannon.outcomes import Outcomes

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "workflow" / "lib"
#: The `fairppl campaign` command as the console script runs it (fairppl.cli:main).
CLI = "import sys; from fairppl.cli import main; sys.exit(main(['campaign', *sys.argv[1:]]))"

SETTINGS = {"corpus": "toy", "language": "en", "split": "test", "protocol": "exhaustive",
            "n": None, "seed": 0, "vocab_size": 3, "vocabulary_corpus": "toy"}

# The worked example of docs/campaign.md: m = 5 outcomes (the, cat, sat, <unk>, </s>), one unit "the dog"
# cut at its 3 positions; the correct outcomes are the, <unk> (dog), </s>.
EXAMPLE_OUTCOMES = Outcomes(("the", "cat", "sat"))
EXAMPLE_BETS = ('{"id": "t000001", "bets": {"the": 0.5, "cat": 0.2}}\n'
                '{"id": "t000002", "bets": {"cat": 0.6, "sat": 0.2}}\n'
                '{"id": "t000003", "bets": {}}\n')


def _campaign(folder: Path, units, outcomes=EXAMPLE_OUTCOMES, **settings) -> Path:
    truncations = make_truncations(units, outcomes, settings.get("protocol", "exhaustive"),
                                   settings.get("n"), settings.get("seed", 0))
    write_campaign(folder, truncations, outcomes, SETTINGS | settings)
    return folder


@pytest.fixture
def example(tmp_path) -> Path:
    return _campaign(tmp_path / "campaign", [("u1", "the dog")])


def _score(folder, text: str | bytes, tmp_path, allow_invalid=False) -> dict:
    path = tmp_path / "bets.jsonl"
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    campaign = read_campaign(folder)
    records, flags = read_submission(path, campaign)
    return score_submission(campaign, records, flags, allow_invalid=allow_invalid)


def _cli(*argv, cwd=None) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(LIB), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", CLI, *map(str, argv)],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


# ---------------------------------------------------------------- scoring


def test_worked_example_by_hand(example, tmp_path):
    result = _score(example, EXAMPLE_BETS, tmp_path)
    # t1: "the" is listed at 0.5. t2: <unk> is unlisted: floor (1 - 0.8) / (5 - 2) = 1/15.
    # t3: {} bets 1/5 on everything. PP = (0.5 * 1/15 * 1/5) ** (-1/3) = 150 ** (1/3).
    assert result["perplexity"] == pytest.approx(150 ** (1 / 3), rel=1e-12)
    assert result["perplexity"] == pytest.approx(5.313293, abs=1e-6)
    assert (result["n_scored"], result["n_flagged"], result["n_floor"],
            result["n_uniform"]) == (3, 0, 2, 1)
    assert result["interval"] is None
    assert result["interval_note"] == ("no interval: the scored truncations cover 1 distinct "
                                       "unit(s), fewer than 20")


def test_uniform_bets_give_m_exactly(tmp_path):
    words = tuple(f"w{k}" for k in range(48))  # m = 50
    units = [(f"u{k}", "w1 w2 x w3") for k in range(7)]
    folder = _campaign(tmp_path / "c", units, Outcomes(words))
    ids = read_campaign(folder).ids
    result = _score(folder, "".join(f'{{"id": "{i}", "bets": {{}}}}\n' for i in ids), tmp_path)
    assert result["n_scored"] == 35  # 7 units of 4 words and the end
    assert result["perplexity"] == pytest.approx(50, rel=1e-14)


def test_floor_through_files(example, tmp_path):
    # Only t2 (answer <unk>) scored: its floor is (1 - 0.8) / 3 = 1/15, so PP = 15.
    text = '{"id": "t000002", "bets": {"cat": 0.6, "sat": 0.2}}\n'
    result = _score(example, text, tmp_path, allow_invalid=True)
    assert result["perplexity"] == pytest.approx(15, rel=1e-12)
    assert [f["id"] for f in result["flagged"]] == ["t000001", "t000003"]
    # A full list of 5: the listed bet counts even when the bets sum below 1.
    text = '{"id": "t000002", "bets": {"the": 0.1, "cat": 0.1, "sat": 0.1, "<unk>": 0.25, ' \
           '"</s>": 0.05}}\n'
    result = _score(example, text, tmp_path, allow_invalid=True)
    assert result["perplexity"] == pytest.approx(4, rel=1e-12)


def test_consistency_check_through_files(example, tmp_path):
    # l = 2, A = 0.15: the floor 0.85 / 3 exceeds the smallest listed bet 0.05.
    text = ('{"id": "t000001", "bets": {"the": 0.1, "cat": 0.05}}\n'
            '{"id": "t000002", "bets": {"cat": 0.6, "sat": 0.2}}\n'
            '{"id": "t000003", "bets": {"</s>": 0.4, "the": 0.2}}\n')
    result = _score(example, text, tmp_path)
    assert result["flagged"] == [{"line": 1, "id": "t000001", "reason": (
        "inconsistent list: the floor (1 - 0.15) / 3 = 0.283333 exceeds the smallest listed bet "
        "0.05 (expected 1 - A <= (m - l) * smallest bet)")}]
    assert result["perplexity"] is None and result["n_scored"] == 0
    # The boundary 1 - A = (m - l) * smallest passes: A = 0.4, smallest 0.2, 3 * 0.2 = 0.6.
    result = _score(example, text.replace('"cat": 0.05', '"cat": 0.2').replace("0.1,", "0.2,"),
                    tmp_path)
    assert result["n_flagged"] == 0
    # t1: 0.2 (the), t2: (1 - 0.8)/3, t3: 0.4 (</s>).
    assert result["perplexity"] == pytest.approx((0.2 * 0.2 / 3 * 0.4) ** (-1 / 3), rel=1e-12)


def test_zero_bet_on_the_answer_is_an_infinite_perplexity(example, tmp_path):
    full = '"the": 0.0, "cat": 0.5, "sat": 0.2, "<unk>": 0.1, "</s>": 0.2'
    text = "".join(f'{{"id": "t00000{k}", "bets": {{{full}}}}}\n' for k in (1, 2, 3))
    result = _score(example, text, tmp_path)
    assert result["perplexity"] == math.inf and result["n_flagged"] == 0
    assert result["perplexity_note"] == ("a bet of 0 on the correct outcome on 1 line(s) "
                                         "(first: line 1): the perplexity is infinite")


def _unigram(outcomes: Outcomes, seed: int) -> np.ndarray:
    p = np.random.default_rng(seed).random(outcomes.m) + 0.05
    return p / p.sum()


def _units(n: int, seed: int, lexicon) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    return [(f"u{k:03d}", " ".join(rng.choice(lexicon, size=rng.integers(1, 9))))
            for k in range(n)]


def test_round_trip_gives_the_unigram_likelihood_perplexity(tmp_path):
    outcomes = Outcomes(("a", "b", "c", "d", "e"))
    p = _unigram(outcomes, 3)
    units = _units(40, 4, ["a", "b", "c", "d", "e", "f", "g"])
    folder = _campaign(tmp_path / "c", units, outcomes)
    campaign = read_campaign(folder)
    bets = {label: float(p[i]) for i, label in enumerate(outcomes.labels)}
    write_bets(tmp_path / "full.jsonl", ((tid, bets) for tid in campaign.ids))
    records, flags = read_submission(tmp_path / "full.jsonl", campaign)
    result = score_submission(campaign, records, flags)
    # The model's likelihood of the units, word by word from the texts (f, g are <unk>).
    index = {w: i for i, w in enumerate(outcomes.labels)}
    logs = [math.log(p[index.get(w, outcomes.unk)]) for _, text in units
            for w in text.split(" ")] + [math.log(p[outcomes.end])] * len(units)
    likelihood_pp = math.exp(-math.fsum(logs) / len(logs))
    assert result["n_scored"] == len(logs) == len(campaign.ids)
    assert abs(result["perplexity"] / likelihood_pp - 1) < 1e-9
    low, high = result["interval"]["low"], result["interval"]["high"]
    assert low < result["perplexity"] < high and result["interval"]["n_units"] == 40
    # The model's own 3 best bets pass the consistency check; the rest get the floor.
    top = np.argsort(-p)[:3]
    listed = {outcomes.labels[i]: float(p[i]) for i in top}
    write_bets(tmp_path / "top3.jsonl", [{"id": tid, "bets": listed} for tid in campaign.ids])
    records, flags = read_submission(tmp_path / "top3.jsonl", campaign)
    assert flags == []
    floor = (1 - sum(listed.values())) / (outcomes.m - 3)
    limited = [math.log(p[index[w]] if index[w] in top else floor)
               for w in (outcomes.outcome(x) for _, text in units for x in text.split(" "))]
    limited += [math.log(p[outcomes.end] if outcomes.end in top else floor)] * len(units)
    expected = math.exp(-math.fsum(limited) / len(limited))
    assert score_submission(campaign, records, flags)["perplexity"] == pytest.approx(
        expected, rel=1e-12)


def test_interval_needs_twenty_units(tmp_path):
    outcomes = Outcomes(("a", "b"))
    for n_units in (MIN_INTERVAL_UNITS - 1, MIN_INTERVAL_UNITS):
        folder = _campaign(tmp_path / f"c{n_units}", _units(n_units, 1, ["a", "b", "z"]),
                           outcomes)
        ids = read_campaign(folder).ids
        result = _score(folder, "".join(f'{{"id": "{i}", "bets": {{}}}}\n' for i in ids),
                        tmp_path)
        if n_units < MIN_INTERVAL_UNITS:
            assert result["interval"] is None
            assert result["interval_note"] == (f"no interval: the scored truncations cover "
                                               f"{n_units} distinct unit(s), fewer than 20")
        else:  # uniform bets: every replicate's perplexity is m
            assert result["interval"]["low"] == pytest.approx(4, rel=1e-12)
            assert result["interval"]["high"] == pytest.approx(4, rel=1e-12)
            assert result["interval_note"].startswith("95% interval of a bootstrap over 20 units")


# ---------------------------------------------------------------- rank-only files


def test_rankings_with_every_answer_first_have_zero_entropy(example, tmp_path):
    pytest.importorskip("fairppl.shannon.ranks")
    text = ('{"id": "t000001", "ranking": ["the", "cat"]}\n'
            '{"id": "t000002", "ranking": ["<unk>", "cat", "sat"]}\n'
            '{"id": "t000003", "ranking": ["</s>", "the"]}\n')
    result = _score(example, text, tmp_path)
    # Every list holds its answer: every rank is known (l = m = 5), the bounds are eq. 9's.
    assert result["kind"] == "ranking" and result["list_length"] == 5
    assert result["rank_bounds_valid"] and result["n_beyond_list"] == 0
    assert result["entropy_lower_bits"] == pytest.approx(0, abs=1e-12)
    assert result["entropy_upper_bits"] == pytest.approx(0, abs=1e-12)


def test_rank_bounds_use_ranks_within_the_shortest_list(example, tmp_path):
    ranks = pytest.importorskip("fairppl.shannon.ranks")
    # Complete rankings (l = m = 5): ranks of the answers 1 (the), 2 (<unk>), 5 (</s>).
    full = ["the", "<unk>", "cat", "sat", "</s>"]
    text = "".join(f'{{"id": "t00000{k}", "ranking": {json.dumps(full)}}}\n' for k in (1, 2, 3))
    result = _score(example, text, tmp_path)
    q = ranks.rank_frequencies(np.array([1, 2, 5]), 5)
    assert q.tolist() == pytest.approx([1 / 3, 1 / 3, 0, 0, 1 / 3])
    lower, upper = ranks.shannon_bounds(q)
    assert result["entropy_lower_bits"] == pytest.approx(lower / math.log(2), rel=1e-12)
    assert result["entropy_upper_bits"] == pytest.approx(upper / math.log(2), rel=1e-12)
    # Shannon's upper bound -sum q log q: three ranks of frequency 1/3 -> log2(3) bits.
    assert result["entropy_upper_bits"] == pytest.approx(math.log2(3), rel=1e-12)
    # Line 2 cut at its answer (<unk>, rank 2), as a person guessing until right stops: every
    # rank is still known, the same values.
    lines = text.splitlines()
    lines[1] = '{"id": "t000002", "ranking": ["the", "<unk>"]}'
    same = _score(example, "\n".join(lines) + "\n", tmp_path)
    assert same["list_length"] == 5 and same["n_beyond_list"] == 0
    for key in ("entropy_lower_bits", "entropy_upper_bits", "rank_bounds_valid",
                "rank_bounds_note"):
        assert same[key] == result[key]
    # Line 2 cut at l = 2 before its answer: ranks are known up to 2 only; the </s> at rank 5
    # and the <unk> at rank 3 are beyond.
    lines[1] = '{"id": "t000002", "ranking": ["the", "cat"]}'
    result = _score(example, "\n".join(lines) + "\n", tmp_path)
    assert result["list_length"] == 2 and result["n_beyond_list"] == 2
    head = ranks.rank_frequencies(np.array([1, 3, 3]), 5)[:2]
    for tail in ("uniform", "zipf"):
        lo, up = ranks.shannon_bounds_limited(head, 5, 2, tail=tail)
        assert result["tails"][tail]["entropy_lower_bits"] == pytest.approx(lo / math.log(2))
        assert result["tails"][tail]["entropy_upper_bits"] == pytest.approx(up / math.log(2))


# ---------------------------------------------------------------- bad input

V1 = '{"id": "t000001", "bets": {"the": 0.5, "cat": 0.2}}'
V2 = '{"id": "t000002", "bets": {"cat": 0.6, "sat": 0.2}}'
V3 = '{"id": "t000003", "bets": {}}'
R1 = '{"id": "t000001", "ranking": ["the", "cat"]}'
R3 = '{"id": "t000003", "ranking": ["</s>"]}'
OUTSIDE = "expected outcomes of vocabulary.txt (words, <unk>, </s>)"

BAD_LINE_2 = {  # a line 2 for t000002 -> its exact reason
    "negative": ('{"id": "t000002", "bets": {"cat": -0.1}}',
                 "the bet on 'cat' is -0.1: expected a probability >= 0"),
    "string": ('{"id": "t000002", "bets": {"cat": "0.5"}}',
               "the bet on 'cat' is a string (\"0.5\"): expected a number"),
    "boolean": ('{"id": "t000002", "bets": {"cat": true}}',
                "the bet on 'cat' is a boolean (true): expected a number"),
    "null": ('{"id": "t000002", "bets": {"cat": null}}',
             "the bet on 'cat' is null (null): expected a number"),
    "nan": ('{"id": "t000002", "bets": {"cat": NaN}}',
            "the bet on 'cat' is nan: expected a finite number"),
    "inf": ('{"id": "t000002", "bets": {"cat": Infinity}}',
            "the bet on 'cat' is inf: expected a finite number"),
    "overflow": ('{"id": "t000002", "bets": {"cat": 1e999}}',
                 "the bet on 'cat' is inf: expected a finite number"),
    "huge integer": ('{"id": "t000002", "bets": {"cat": 1' + "0" * 400 + '}}',
                     "the bet on 'cat' is inf: expected a finite number"),
    "sum above 1": ('{"id": "t000002", "bets": {"the": 0.7, "cat": 0.6}}',
                    "the bets sum to 1.3: expected at most 1"),
    "full list above 1": ('{"id": "t000002", "bets": {"the": 0.2, "cat": 0.2, "sat": 0.2, '
                          '"<unk>": 0.2, "</s>": 0.2001}}',
                          "the bets sum to 1.0001: expected at most 1"),
    "sum 1 leaves no floor": ('{"id": "t000002", "bets": {"the": 0.5, "cat": 0.5}}',
                              "inconsistent list: the 2 listed bets sum to 1: nothing is left for "
                              "the 3 unlisted outcomes (expected a sum below 1)"),
    "inconsistent": ('{"id": "t000002", "bets": {"cat": 0.6, "sat": 0.01}}',
                     "inconsistent list: the floor (1 - 0.61) / 3 = 0.13 exceeds the smallest "
                     "listed bet 0.01 (expected 1 - A <= (m - l) * smallest bet)"),
    "outside vocabulary": ('{"id": "t000002", "bets": {"dog": 0.1, "cat": 0.1}}',
                           f"bets on 'dog', not in vocabulary.txt: {OUTSIDE}"),
    "repeated bet key": ('{"id": "t000002", "bets": {"cat": 0.1, "cat": 0.2}}',
                         "bets name 'cat' more than once: expected each outcome once"),
    "bets not an object": ('{"id": "t000002", "bets": [0.5]}',
                           '"bets" is a list: expected an object mapping outcomes to '
                           'probabilities'),
    "both": ('{"id": "t000002", "bets": {}, "ranking": ["the"]}',
             'both "bets" and "ranking": expected exactly one of them'),
    "neither": ('{"id": "t000002", "Bets": {}}',
                "unexpected key(s) 'Bets': expected only \"id\" and \"bets\" or \"ranking\"; "
                'neither "bets" nor "ranking": expected exactly one of them'),
    "ranking in a bets file": ('{"id": "t000002", "ranking": ["cat"]}',
                               "a ranking in a file of bets (line 1 has bets): expected one "
                               "kind per file"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINE_2))
def test_bad_bets_line_is_flagged_with_its_line_and_reason(example, tmp_path, case):
    line, reason = BAD_LINE_2[case]
    result = _score(example, "\n".join([V1, line, V3]) + "\n", tmp_path)
    assert result["flagged"] == [{"line": 2, "id": "t000002", "reason": reason}]
    assert result["n_flagged"] == 1 and result["perplexity"] is None
    # With --allow-invalid the other two are scored: 0.5 and 1/5.
    result = _score(example, "\n".join([V1, line, V3]) + "\n", tmp_path, allow_invalid=True)
    assert result["n_scored"] == 2
    assert result["perplexity"] == pytest.approx(0.1 ** -0.5, rel=1e-12)
    assert result["note"] == ("scored the valid rest (--allow-invalid): 2 of 3 truncations; "
                              "1 flagged left out")


BAD_RANKING = {
    "repeated": ('["cat", "the", "cat", "sat", "the"]',
                 "the ranking repeats 'cat' at 1 and 3, 'the' at 2 and 5: expected distinct "
                 "outcomes"),
    "unknown": ('["cat", "dog", "cow"]',
                f"the ranking names 'dog', 'cow', not in vocabulary.txt: {OUTSIDE}"),
    "empty": ("[]", "empty ranking: expected at least one outcome, best first"),
    "not a list": ('"cat"', '"ranking" is a string: expected a list of outcomes, best first'),
    "not strings": ('["cat", 3]', "ranking entry 2 is a number: expected outcome strings"),
}


@pytest.mark.parametrize("case", sorted(BAD_RANKING))
def test_bad_ranking_is_flagged(example, tmp_path, case):
    ranking, reason = BAD_RANKING[case]
    line = f'{{"id": "t000002", "ranking": {ranking}}}'
    result = _score(example, "\n".join([R1, line, R3]) + "\n", tmp_path)
    assert result["flagged"] == [{"line": 2, "id": "t000002", "reason": reason}]


BAD_FILE = {  # whole file -> every flag
    "empty file": (b"", [(None, None, "empty file: expected one JSON object per truncation "
                                      "(id with bets or ranking)")]),
    "blank lines only": (b"\n  \n", [(None, None, "empty file: expected one JSON object per "
                                                  "truncation (id with bets or ranking)")]),
    "missing": (f"{V1}\n{V3}\n".encode(),
                [(None, "t000002", "missing: no line gives this truncation")]),
    "duplicate": (f"{V1}\n{V2}\n{V3}\n{V1}\n".encode(),
                  [(4, "t000001", "duplicate id 't000001': already given on line 1")]),
    "unknown": (f'{V1}\n{V2}\n{V3}\n{{"id": "t9", "bets": {{}}}}\n'.encode(),
                [(4, "t9", "unknown id 't9': no such truncation in truncations.jsonl")]),
    "id not a string": (f'{V1}\n{{"id": 2, "bets": {{}}}}\n{V3}\n'.encode(),
                        [(2, None, '"id" is a number (2): expected the string id of a truncation '
                                   'of truncations.jsonl'),
                         (None, "t000002", "missing: no line gives this truncation")]),
    "no id": (f'{V1}\n{V2}\n{V3}\n{{"bets": {{}}}}\n'.encode(),
              [(4, None, 'no "id": expected the id of a truncation of truncations.jsonl')]),
    "not JSON": (f'{V1}\n{{"id": "t000002", "bets": {{\n{V3}\n'.encode(),
                 [(2, None, "not JSON (Expecting property name enclosed in double quotes at "
                            "column 28): expected one JSON object per line"),
                  (None, "t000002", "missing: no line gives this truncation")]),
    "not an object": (f"{V1}\n[1, 2]\n{V3}\n".encode(),
                      [(2, None, 'a list, not an object: expected {"id": ..., "bets": {...}} '
                                 'or {"id": ..., "ranking": [...]}'),
                       (None, "t000002", "missing: no line gives this truncation")]),
    "blank line": (f"{V1}\n\n{V2}\n{V3}\n".encode(),
                   [(2, None, "blank line: expected one JSON object per line")]),
    "non-UTF-8": (V1.encode() + b'\n{"id": "t000002", "bets": {"caf\xe9": 0.1}}\n'
                  + V3.encode() + b"\n",
                  [(2, None, "invalid UTF-8 at byte 31 of the line (b'\\xe9\": '): expected "
                             "UTF-8 text"),
                   (None, "t000002", "missing: no line gives this truncation")]),
    "UTF-16 with a byte-order mark": (
        EXAMPLE_BETS.encode("utf-16"),
        [(None, None, "the file is UTF-16 (little-endian), not UTF-8: expected UTF-8 text, one "
                      "JSON object per line (save it as UTF-8)")]),
    "UTF-16 big-endian without one": (
        EXAMPLE_BETS.encode("utf-16-be"),
        [(None, None, "the file is UTF-16 (big-endian), not UTF-8: expected UTF-8 text, one "
                      "JSON object per line (save it as UTF-8)")]),
    "repeated id key": (f'{V1}\n{{"id": "t000002", "id": "t000002", "bets": {{}}}}\n{V3}\n'
                        .encode(),
                        [(2, "t000002", "the key(s) 'id' given more than once: expected each "
                                        "once")]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILE))
def test_bad_file_is_flagged(example, tmp_path, case):
    data, expected = BAD_FILE[case]
    result = _score(example, data, tmp_path)
    assert [(f["line"], f["id"], f["reason"]) for f in result["flagged"]] == expected
    assert result["perplexity"] is None


def test_every_problem_is_reported_not_only_the_first(example, tmp_path):
    text = "\n".join([V1, '{"id": "t000002", "bets": {"cat": -1, "dog": "x"}}', "nope",
                      V1]) + "\n"
    result = _score(example, text, tmp_path)
    assert [(f["line"], f["id"]) for f in result["flagged"]] == [
        (2, "t000002"), (3, None), (4, "t000001"), (None, "t000003")]
    assert result["flagged"][0]["reason"] == (
        f"bets on 'dog', not in vocabulary.txt: {OUTSIDE}; the bet on 'cat' is -1: expected a "
        f"probability >= 0; the bet on 'dog' is a string (\"x\"): expected a number")


BAD_VOCABULARY = {
    "duplicate": ("the\ncat\nthe\n<unk>\n</s>\n",
                  "vocabulary.txt, line 3: duplicate outcome 'the' (first on line 1): expected "
                  "each outcome once"),
    "no end last": ("the\ncat\nsat\n</s>\n<unk>\n",
                    "vocabulary.txt, line 5: the last two lines are ['</s>', '<unk>']: expected "
                    "'<unk>' then '</s>' last"),
    "no unk": ("the\ncat\nsat\nfoo\n</s>\n",
               "vocabulary.txt, line 5: the last two lines are ['foo', '</s>']: expected "
               "'<unk>' then '</s>' last"),
    "empty line": ("the\n\ncat\n<unk>\n</s>\n",
                   "vocabulary.txt, line 2: '' is not an outcome: expected one word per line (no "
                   "spaces, no empty line)"),
    "reserved word": ("the\n<s>\nsat\n<unk>\n</s>\n",
                      "vocabulary.txt, line 2: reserved word '<s>' among the vocabulary words: "
                      "expected '<unk>' and '</s>' only as the last two lines"),
}


@pytest.mark.parametrize("case", sorted(BAD_VOCABULARY))
def test_bad_vocabulary_names_file_and_line(example, tmp_path, case):
    text, message = BAD_VOCABULARY[case]
    (example / "vocabulary.txt").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_campaign(example)
    assert str(err.value) == f"{example}/{message}"
    (tmp_path / "bets.jsonl").write_text(EXAMPLE_BETS, encoding="utf-8")
    proc = _cli("score", example, tmp_path / "bets.jsonl")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip() == f"error: {example}/{message}"


def test_key_that_does_not_match_the_truncations_is_refused(example):
    key = example / "key.jsonl"
    key.write_text(key.read_text().replace("t000002", "t000009"), encoding="utf-8")
    with pytest.raises(InputError, match=r"key.jsonl, line 2: id 't000009', truncations.jsonl "
                                         r"has 't000002' on this line"):
        read_campaign(example)


EDITED_CONTEXTS = [
    # (which line, the new context or None for the key edit, the message)
    (2, "a", "truncations.jsonl, line 2: context 'a' does not extend line 1's '' by its answer "
             "'the' (key.jsonl): expected the previous context followed by its answer"),
    (3, "the cat", "truncations.jsonl, line 3: context 'the cat' does not extend line 2's "
                   "'the' by its answer '<unk>' (key.jsonl)"),  # "cat" is a vocabulary word
    (3, "the dog bites", "line 3: context 'the dog bites' does not extend line 2's 'the'"),
    (1, "the", "truncations.jsonl, line 1: the first truncation of unit 'u1' has the context "
               "'the': expected an empty context"),
]


@pytest.mark.parametrize("line,context,message", EDITED_CONTEXTS)
def test_a_hand_edited_context_is_refused_naming_the_line(example, line, context, message):
    """An exhaustive campaign's contexts extend each other by the key's answers: the play page
    shows the answer's word from the next context, and an edit would be served as is."""
    path = example / "truncations.jsonl"
    rows = _read_jsonl(path)
    rows[line - 1]["context"] = context
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_campaign(example)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_key_that_ends_a_unit_early_is_refused(example):
    key = example / "key.jsonl"
    rows = _read_jsonl(key)
    rows[-1]["word"] = "sat"
    key.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"key.jsonl, line 3: the last truncation of unit 'u1' "
                                         r"has the answer 'sat': expected '</s>'"):
        read_campaign(example)


def test_character_contexts_are_checked_too(tmp_path):
    outcomes = Outcomes(("起", "初"))
    folder = tmp_path / "zh"
    write_campaign(folder, make_truncations([("u1", "起初， 神")], outcomes, "exhaustive",
                                            unit="char"), outcomes, SETTINGS | {"unit": "char"})
    campaign = read_campaign(folder)  # the space before 神 is allowed
    assert len(campaign.ids) == 5
    path = folder / "truncations.jsonl"
    path.write_text(path.read_text(encoding="utf-8").replace("起初， 神", "起初，神神"),
                    encoding="utf-8")
    with pytest.raises(InputError, match="line 5: context '起初，神神' does not extend line 4's "
                                         "'起初，' by its answer '<unk>'"):
        read_campaign(folder)


# ---------------------------------------------------------------- the CLI


def test_cli_exit_statuses_and_json(example, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(EXAMPLE_BETS, encoding="utf-8")
    proc = _cli("score", example, good, "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["perplexity"] == pytest.approx(150 ** (1 / 3), rel=1e-12)
    assert (result["n_scored"], result["n_flagged"], result["flagged"]) == (3, 0, [])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(EXAMPLE_BETS.replace('"sat": 0.2', '"sat": -0.2'), encoding="utf-8")
    proc = _cli("score", example, bad, "--json")
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["perplexity"] is None and result["n_scored"] == 0
    assert result["flagged"] == [{"line": 2, "id": "t000002",
                                  "reason": "the bet on 'sat' is -0.2: expected a probability "
                                            ">= 0"}]
    proc = _cli("score", example, bad, "--json", "--allow-invalid")
    assert proc.returncode == 0
    result = json.loads(proc.stdout)
    assert result["allow_invalid"] is True and result["n_scored"] == 2
    assert result["perplexity"] == pytest.approx(10 ** 0.5, rel=1e-12)
    assert "scored the valid rest" in result["note"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    proc = _cli("score", example, empty, "--json", "--allow-invalid")  # nothing left to score
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["note"] == "nothing to score: no valid record"
    proc = _cli("score", example, bad)  # the readable summary
    assert proc.returncode == 1
    assert "line 2 (id t000002): the bet on 'sat' is -0.2: expected a probability >= 0" in \
        proc.stdout.splitlines()
    assert "n_flagged: 1" in proc.stdout.splitlines()
    proc = _cli("score", tmp_path / "nowhere", good)
    assert proc.returncode == 2 and "no such folder" in proc.stderr


def test_cli_summary_in_process(example, tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    good.write_text(EXAMPLE_BETS.replace('"bets": {}}', '"bets": {"</s>": 0.2, "the": 0.2}}'),
                    encoding="utf-8")
    assert main(["campaign", "score", str(example), str(good)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "perplexity: 5.31329"  # the same bet 0.2 on </s> as {}
    assert out[-2:] == ["n_scored: 3", "n_flagged: 0"]


# ---------------------------------------------------------------- truncations from a study


TRAIN = ["a b a c", "a b d", "b a"]  # a: 4, b: 3, c: 1, d: 1 -> V = 2 keeps a, b


def _study(root: Path, vocab_size="2", test=("a b e", "c a"), corpus="toy") -> Path:
    rows = []
    texts = [("train", t) for t in TRAIN] + [("test", t) for t in test] + [("dev", "a")]
    for language in ("xx", "yy"):
        for pos, (split, text) in enumerate(texts):
            rows.append({"corpus": corpus, "unit_id": f"{pos:03d}", "position": pos,
                         "language": language, "split": split,
                         "text": text if language == "xx" else "z z", "english_reference": False})
    out = root / "results" / "corpus" / corpus
    out.mkdir(parents=True)
    pl.DataFrame(rows).sample(fraction=1.0, shuffle=True, seed=1).write_parquet(
        out / "units.parquet")
    (root / "config").mkdir(exist_ok=True)
    block = f"shannon:\n  vocab_size: {vocab_size}\n" if vocab_size is not None else ""
    (root / "config" / "config.yaml").write_text(
        f"corpora:\n  {corpus}:\n    enabled: true\n{block}", encoding="utf-8")
    return root


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_truncations_take_the_study_from_root(tmp_path):
    root = _study(tmp_path / "study")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = _cli("truncations", "--root", root, "--corpus", "toy", "--language", "xx", "--out",
                "camp", cwd=elsewhere)
    assert proc.returncode == 0, proc.stderr
    assert read_campaign(elsewhere / "camp").m == 4  # the config's vocab_size 2, under --root
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "c2",
                cwd=elsewhere)
    assert proc.returncode == 2 and "no config file config/config.yaml" in proc.stderr


def test_truncations_on_a_tiny_prepared_corpus(tmp_path):
    root = _study(tmp_path / "study")
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("wrote camp: 7 truncations of 2 units (exhaustive, toy/xx "
                                   "test), m = 4 outcomes, unit word (xx is not in "
                                   "word_ngram.languages_without_spaces of config/config.yaml)")
    camp = root / "camp"
    assert (camp / "vocabulary.txt").read_text(encoding="utf-8") == "a\nb\n<unk>\n</s>\n"
    ids = [f"t00000{k}" for k in range(1, 8)]
    assert _read_jsonl(camp / "truncations.jsonl") == [
        {"id": i, "unit_id": u, "context": c} for i, u, c in zip(
            ids, ["003"] * 4 + ["004"] * 3, ["", "a", "a b", "a b e", "", "c", "c a"])]
    assert _read_jsonl(camp / "key.jsonl") == [
        {"id": i, "word": w} for i, w in zip(ids, ["a", "b", "<unk>", "</s>", "<unk>", "a",
                                                   "</s>"])]
    meta = json.loads((camp / "campaign.json").read_text(encoding="utf-8"))
    assert meta == {"format": "fairppl-campaign/3", "corpus": "toy", "language": "xx",
                    "unit": "word", "split": "test", "protocol": "exhaustive",
                    "scheme": "exhaustive", "n": None, "seed": 0,
                    "vocab_size": 2, "vocabulary_corpus": "toy", "m": 4, "n_truncations": 7,
                    "n_units": 2}
    # Uniform bets score m = 4.
    (root / "u.jsonl").write_text("".join(f'{{"id": "{i}", "bets": {{}}}}\n' for i in ids))
    result = json.loads(_cli("score", camp, root / "u.jsonl", "--json").stdout)
    assert result["perplexity"] == pytest.approx(4, rel=1e-14)
    # A rerun with the same settings leaves the folder as it is; other settings are refused.
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp", cwd=root)
    assert proc.returncode == 0 and proc.stdout.startswith("unchanged")
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp",
                "--vocab-size", "3", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: camp: an earlier campaign with other settings "
                                   "(vocab_size 2 there, 3 now): expected a new or empty "
                                   "folder, or the same settings")
    # --vocab-size wins over the config; --n keeps the first units; split all.
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "c3",
                "--vocab-size", "3", "--n", "1", "--split", "all", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert (root / "c3" / "vocabulary.txt").read_text() == "a\nb\nc\n<unk>\n</s>\n"
    assert [t["context"] for t in _read_jsonl(root / "c3" / "truncations.jsonl")] == [
        "", "a", "a b", "a b a", "a b a c"]


def test_truncations_refusals(tmp_path):
    root = _study(tmp_path / "study", vocab_size=None)
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: config/config.yaml: no --vocab-size and no key "
                                   "shannon.vocab_size: expected --vocab-size V or the key "
                                   "shannon.vocab_size in config/config.yaml")
    assert not (root / "camp").exists()
    proc = _cli("truncations", "--corpus", "toy", "--language", "qq", "--out", "camp",
                "--vocab-size", "2", cwd=root)
    assert proc.returncode == 2 and "no units of language 'qq': expected one of xx, yy" in \
        proc.stderr
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp",
                "--vocab-size", "2", "--protocol", "randomized", "--n", "3", cwd=root)
    assert proc.returncode == 2 and "n = 3: only 2 units to draw from" in proc.stderr
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "camp",
                "--vocab-size", "2", "--n", "0", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: --n 0: expected a number of units >= 1 (or no --n: "
                                   "every unit)")
    assert not (root / "camp").exists()
    (root / "other").mkdir()
    (root / "other" / "notes.txt").write_text("mine")
    proc = _cli("truncations", "--corpus", "toy", "--language", "xx", "--out", "other",
                "--vocab-size", "2", cwd=root)
    assert proc.returncode == 2 and "a non-empty folder that holds no campaign" in proc.stderr
    assert sorted(p.name for p in (root / "other").iterdir()) == ["notes.txt"]


def test_evaluation_only_corpus_takes_its_vocabulary_from_models_from(tmp_path):
    root = _study(tmp_path / "study")
    _study(tmp_path / "study2", corpus="ev", test=("b b q",))
    (root / "results" / "corpus" / "ev").mkdir()
    os.replace(tmp_path / "study2" / "results" / "corpus" / "ev" / "units.parquet",
               root / "results" / "corpus" / "ev" / "units.parquet")
    frame = pl.read_parquet(root / "results" / "corpus" / "ev" / "units.parquet")
    frame.with_columns(text=pl.when(pl.col("split") == "train").then(pl.lit("q q q"))
                       .otherwise(pl.col("text"))).write_parquet(
        root / "results" / "corpus" / "ev" / "units.parquet")
    (root / "config" / "config.yaml").write_text(
        "corpora:\n  toy: {enabled: true}\n  ev: {enabled: true, models_from: toy}\n"
        "shannon:\n  vocab_size: 2\n", encoding="utf-8")
    meta = build_campaign(root, "ev", "xx", root / "camp")
    assert meta["vocabulary_corpus"] == "toy"
    # The vocabulary is the Bible-like corpus's a, b, not the evaluation corpus's own q.
    assert (root / "camp" / "vocabulary.txt").read_text() == "a\nb\n<unk>\n</s>\n"
    assert [k["word"] for k in _read_jsonl(root / "camp" / "key.jsonl")] == [
        "b", "b", "<unk>", "</s>"]


def test_randomized_one_truncation_per_distinct_unit_reproducible(tmp_path):
    outcomes = Outcomes(("a", "b"))
    units = _units(60, 2, ["a", "b", "c"])
    draw = make_truncations(units, outcomes, "randomized", 25, seed=7)
    assert len(draw) == 25 and len({t["unit_id"] for t in draw}) == 25
    assert [t["id"] for t in draw] == [f"t{k:06d}" for k in range(1, 26)]
    assert draw == make_truncations(units, outcomes, "randomized", 25, seed=7)
    other = make_truncations(units, outcomes, "randomized", 25, seed=8)
    assert [t["unit_id"] for t in other] != [t["unit_id"] for t in draw]
    texts = dict(units)
    for t in draw:  # each truncation is a position of its unit, with its correct outcome
        words = texts[t["unit_id"]].split(" ")
        k = len(t["context"].split(" ")) if t["context"] else 0
        assert t["context"] == " ".join(words[:k])
        assert t["word"] == (outcomes.outcome(words[k]) if k < len(words) else "</s>")
    every = make_truncations(units, outcomes, "randomized", None, seed=7)
    assert sorted(t["unit_id"] for t in every) == sorted(u for u, _ in units)
    # Positions are spread over the units' lengths, the end of the unit included.
    ends = sum(t["word"] == "</s>" for t in every)
    assert 0 < ends < len(every)


# ---------------------------------------------------------------- randomized campaigns


#: Units whose truncations a toy bettor bets on with ln bet = -L / 4, L the unit's number of
#: truncations (its words + 1): the per-word Q is sum L^2 / (4 sum L), the mean over units
#: mean(L) / 4, far apart.
TOY_TEXTS = [" ".join(["a"] * k) for k in (1, 8, 2, 11, 1, 4, 3, 10, 2, 5, 1, 7, 2, 3, 9)]
TOY_UNITS = [(f"u{k:02d}", text) for k, text in enumerate(TOY_TEXTS)]


def _toy_q(truncations) -> float:
    """The scorer's Q of the toy bettor on a campaign's truncations (weights from the key)."""
    length = {uid: len(text.split(" ")) + 1 for uid, text in TOY_UNITS}
    w = np.array([t.get("weight", 1) for t in truncations], dtype=float)
    x = np.array([length[t["unit_id"]] / 4 for t in truncations])
    return float((w * x).sum() / w.sum())


@pytest.mark.parametrize("n,scheme", [(3, "systematic"), (7, "systematic"), (9, "weighted"),
                                      (15, "weighted")])
def test_randomized_campaigns_estimate_the_per_word_value(n, scheme):
    outcomes = Outcomes(("a",))
    lengths = np.array([len(t.split(" ")) + 1 for t in TOY_TEXTS])
    exhaustive = _toy_q(make_truncations(TOY_UNITS, outcomes, "exhaustive"))
    assert exhaustive == pytest.approx((lengths ** 2).sum() / (4 * lengths.sum()), rel=1e-14)
    # N = 84 truncations, the longest unit 12: one every 84 // n >= 12 truncations (distinct
    # units) up to n = 7; length-weighted beyond; n = 15 takes every unit.
    qs = []
    for seed in range(1500):
        draw = make_truncations(TOY_UNITS, outcomes, "randomized", n, seed)
        assert len({t["unit_id"] for t in draw}) == n
        qs.append(_toy_q(draw))
    assert {t["scheme"] for t in draw} == {scheme}
    qs = np.array(qs)
    se = qs.std(ddof=1) / math.sqrt(qs.size)
    # within 4 Monte Carlo standard errors of the exhaustive per-word value
    assert abs(qs.mean() - exhaustive) <= 4 * se + 1e-12, (qs.mean(), exhaustive, se)
    # and far from the mean over units, which drawing units uniformly would estimate
    assert abs(lengths.mean() / 4 - exhaustive) > 20 * se


def test_length_weighted_campaign_is_scored_with_its_weights(tmp_path):
    outcomes = Outcomes(("a",))
    draw = make_truncations(TOY_UNITS, outcomes, "randomized", 9, seed=4)
    assert {t["scheme"] for t in draw} == {"weighted"}
    folder = tmp_path / "c"
    write_campaign(folder, draw, outcomes, SETTINGS | {"protocol": "randomized", "n": 9,
                                                       "seed": 4})
    keys = _read_jsonl(folder / "key.jsonl")
    assert [k["weight"] for k in keys] == [t["weight"] for t in draw]
    campaign = read_campaign(folder)
    assert campaign.scheme == "weighted" and campaign.weights == tuple(t["weight"] for t in draw)
    # the toy bettor: bet exp(-L/4) on the answer (listed alone; it passes the check for m = 3
    # only when the floor (1 - b) / 2 is at most b, so list the full m = 3 outcomes)
    length = {uid: len(text.split(" ")) + 1 for uid, text in TOY_UNITS}
    lines = []
    for t in draw:
        b = math.exp(-length[t["unit_id"]] / 4)
        bets = {label: (b if label == t["word"] else (1 - b) / 2) for label in outcomes.labels}
        lines.append(json.dumps({"id": t["id"], "bets": bets}))
    result = _score(folder, "\n".join(lines) + "\n", tmp_path)
    assert result["scheme"] == "weighted" and result["n_flagged"] == 0
    assert result["perplexity"] == pytest.approx(math.exp(_toy_q(draw)), rel=1e-12)
    # a plain mean would give another value
    assert result["perplexity"] != pytest.approx(
        math.exp(np.mean([length[t["unit_id"]] / 4 for t in draw])), rel=1e-3)


def test_rank_values_that_are_no_bounds_say_so(example, tmp_path, capsys):
    # Every answer at the last place of a complete ranking (m = 5): eq. 9 gives the lower end
    # 5 ln 5 - 4 ln 4 (perplexity 3125/256 = 12.2, above m) and the upper 0: inverted,
    # impossible.
    order = ["the", "cat", "sat", "<unk>", "</s>"]
    lines = []
    for k, answer in ((1, "the"), (2, "<unk>"), (3, "</s>")):
        ranking = [w for w in order if w != answer] + [answer]
        lines.append(json.dumps({"id": f"t00000{k}", "ranking": ranking}))
    (tmp_path / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _score(example, "\n".join(lines) + "\n", tmp_path)
    assert result["perplexity_lower"] == pytest.approx(3125 / 256)
    assert result["perplexity_upper"] == pytest.approx(1.0)
    assert result["rank_bounds_valid"] is False and result["n_truncations_ranked"] == 3
    assert result["rank_bounds_note"].startswith("no interval: the lower end exceeds the upper")
    assert "impossible: the lower end 12.21 exceeds m = 5" in result["rank_bounds_note"]
    assert main(["campaign", "score", str(example), str(tmp_path / "r.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "entropy values (not bounds): " in out and " from 3 truncations; " in out
    # Cut lists (l = 2 < m: the last one misses its answer </s>): values, not bounds, even
    # when ordered.
    text = ('{"id": "t000001", "ranking": ["the", "cat"]}\n'
            '{"id": "t000002", "ranking": ["<unk>", "cat"]}\n'
            '{"id": "t000003", "ranking": ["the", "cat"]}\n')
    result = _score(example, text, tmp_path)
    assert result["rank_bounds_valid"] is False
    assert "uniform: cut at l = 2 of m = 5" in result["rank_bounds_note"]


def test_weights_and_earlier_formats_are_checked(tmp_path):
    outcomes = Outcomes(("a",))
    draw = make_truncations(TOY_UNITS, outcomes, "randomized", 9, seed=4)
    folder = tmp_path / "c"
    write_campaign(folder, draw, outcomes, SETTINGS | {"protocol": "randomized", "n": 9})
    key = folder / "key.jsonl"
    lines = key.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps({"id": "t000002", "word": json.loads(lines[1])["word"]})
    key.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"key.jsonl, line 2: weight None: expected the unit's "
                                         r"number of truncations"):
        read_campaign(folder)
    # a /1 folder (no scheme, no weights): its randomized draws took units uniformly, said so
    write_campaign(tmp_path / "old", draw, outcomes, SETTINGS | {"protocol": "randomized"})
    meta_path = tmp_path / "old" / "campaign.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta.pop("scheme")
    meta["format"] = "fairppl-campaign/1"
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    campaign = read_campaign(tmp_path / "old")
    assert campaign.scheme == "units" and campaign.weights is None
    ids = campaign.ids
    result = _score(tmp_path / "old", "".join(f'{{"id": "{i}", "bets": {{}}}}\n' for i in ids),
                    tmp_path)
    assert result["perplexity"] == pytest.approx(3) and "mean over units" in result["scheme_note"]


@pytest.mark.parametrize("argv, expected", [
    (["bets", "--model", "bigram-eq7", "--l", "abc"], "--l 'abc': expected a list length >= 0 or all"),
    (["bets", "--model", "bigram-eq7", "--l", ""], "--l '': expected a list length >= 0 or all"),
    (["bets", "--model", "bigram-eq7", "--alpha", "-1"], "alpha must lie strictly between 0 and 1"),
    (["bets", "--model", "bigram-eq7"], "no such file: expected the study's prepared units of "
                                        "corpus 'toy'"),
    (["models", "--bettors", ""], "--bettors ['']: expected a comma-separated list"),
    (["models", "--bettors", "bigram", "--root", "nowhere"], "skipped bigram-eq7: nowhere"),
])
def test_bad_bets_and_models_arguments_are_refused_in_one_line(example, tmp_path, argv, expected):
    out = ["--out", str(tmp_path / "b.jsonl")] if argv[0] == "bets" else []
    proc = _cli(*argv, *out, str(example), cwd=tmp_path)
    assert proc.returncode != 0
    assert expected in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
