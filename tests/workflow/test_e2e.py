"""End to end on the real offline corpora: the tiny test config (3 languages of 3 scripts, four
short Bible books, the UDHR) run in a temporary directory, with assertions on the numbers."""

from __future__ import annotations

import json
import math
import random
import shutil
import subprocess

import polars as pl
import pytest

from conftest import ROOT, VENV_BIN, ahead, assert_ok, make_workdir, snakemake

pytestmark = pytest.mark.e2e


def test_a_finished_study_has_nothing_left_to_do(study):
    """Rerunning a finished study plans no job: no rule's params, code or inputs drift between
    invocations (a per-run path in params once made every n-gram rerun each time)."""
    wd, _ = study
    proc = snakemake(wd, "--dry-run")
    assert_ok(proc)
    assert "Nothing to be done" in proc.stdout + proc.stderr, proc.stdout[-3000:]


def test_table_has_every_corpus_language_model(study):
    _, bpu = study
    keys = set(bpu.select("corpus", "language", "model", "tokenizer").iter_rows())
    # The UDHR is evaluation-only (models_from: bible): its eng and kor are scored by the Bible's
    # models of the same language (no word models: closed vocabulary, Bible only). A UDHR
    # language with no Bible row and no pretrained model listing it is refused at start-up.
    expected = set()
    for corpus, langs in {"bible": ("eng", "tur", "kor"), "udhr": ("eng", "kor")}.items():
        for lang in langs:
            expected |= {(corpus, lang, f"kenlm-char-o{o}", "char") for o in (5, 7)}
            expected |= {(corpus, lang, "kenlm-subword-o3", "spm-unigram-3000"),
                         (corpus, lang, "tiny-random", "native")}
    for lang in ("eng", "tur", "kor"):
        expected |= {("bible", lang, "kenlm-word-o3", f"word-v{v}") for v in (100, 500, "all")}
    for corpus in ("bible", "udhr"):
        for lang in ("eng", "kor"):
            expected |= {(corpus, lang, "transformer", tok) for tok in ("char", "spm-unigram-3000")}
    assert keys == expected
    assert set(bpu.filter(corpus="bible")["split"]) == {"test"}
    assert set(bpu.filter(corpus="udhr")["split"]) == {"all"}
    csv = pl.read_csv(study[0] / "results" / "tables" / "bpu.csv")
    assert csv.columns == bpu.columns and csv.height == bpu.height


def test_numbers_are_finite_and_plausible(study):
    _, bpu = study
    for row in bpu.filter(pl.col("model").str.starts_with("kenlm-char")).iter_rows(named=True):
        for col in ("bits_total", "bits_per_utterance", "bpec", "bits_per_char", "bits_per_byte"):
            assert math.isfinite(row[col]) and row[col] > 0, (row, col)
        # A character model trained on a few thousand characters: between 1 and 8 bits per
        # English character; never more than 8 bits per byte plus the model's overhead.
        assert 1.0 < row["bpec"] < 8.0, row
        assert row["bits_per_byte"] < row["bits_per_char"] or row["language"] == "eng", row
        assert row["bits_per_utterance"] == pytest.approx(row["bits_total"] / row["n_units"])


def test_order_7_uses_longer_contexts(study):
    """The Python module loads order-7 models (built with MAX_ORDER=7); on real text, more context
    never hurts much and usually helps on the Bible's longer train split."""
    _, bpu = study
    chars = bpu.filter(corpus="bible", tokenizer="char").filter(pl.col("model").str.starts_with("kenlm"))
    wide = chars.pivot(on="model", index="language", values="bits_total")
    assert (wide["kenlm-char-o7"] < 1.1 * wide["kenlm-char-o5"]).all()


def test_identities_between_columns(study):
    _, bpu = study
    eng = bpu.filter(language="eng")
    # For the English reference, BPEC is its own bits per character, and chars == bytes (ASCII).
    assert (eng["bpec"] - eng["bits_per_char"]).abs().max() < 1e-12
    # The n-grams score every test unit: the same units, the same English length, everywhere;
    # the neural and pretrained models score the first scoring.max_units = 20 of them.
    ngrams = bpu.filter(pl.col("model").str.starts_with("kenlm"))
    per_corpus = ngrams.group_by("corpus").agg(pl.col("n_units").n_unique(),
                                               pl.col("n_english_chars").n_unique())
    assert per_corpus["n_units"].to_list() == [1, 1]
    assert per_corpus["n_english_chars"].to_list() == [1, 1]
    lms = bpu.filter(pl.col("model").is_in(["transformer", "tiny-random"]))
    assert set(lms["n_units"]) == {20}
    # The UDHR is scored whole (eval_split: all): the n-grams score all 31 units.
    udhr = ngrams.filter(corpus="udhr")
    assert set(udhr["n_units"]) == {31}
    # Every model's end-of-unit charge is recorded (n-grams: </s>; token LMs: the end token), and
    # the rates without it subtract exactly that.
    assert bpu["bits_eos_total"].null_count() == 0
    assert ((bpu["bits_total"] - bpu["bits_eos_total"]) / bpu["n_units"]
            - bpu["bits_per_utterance_no_eos"]).abs().max() < 1e-9
    assert (bpu["eos_share"] > 0).all() and (bpu["eos_share"] < 1).all()
    # The trained open-vocabulary n-grams learn where a verse ends: under 1% of their bits here
    # (a closed 100-word model's few bits of naive UNK cost make the end a larger share: 7%).
    assert ngrams.filter(corpus="bible", open_vocabulary=True)["eos_share"].max() < 0.02


def test_units_and_dropped_placeholders(study):
    from fairppl.corpus.prepare import read_dropped

    wd, _ = study
    units = pl.read_parquet(wd / "results" / "corpus" / "bible" / "units.parquet")
    dropped = read_dropped(wd / "results" / "corpus" / "bible" / "dropped.tsv")
    per_lang = units.group_by("language").agg(pl.len(), pl.col("unit_id").sort().str.join(","))
    assert per_lang["unit_id"].n_unique() == 1  # the same units in every language
    # Ruth, Jonah, Philemon, Jude: 183 verses, 24 dropped, decided from all 31 translations
    # (Bengali's placeholders count although Bengali is not configured).
    assert per_lang["len"].to_list() == [183 - 24] * 3
    assert dropped["position"].n_unique() == 24
    assert not set(dropped["position"]) & set(units["position"])
    assert {"b", "t"} <= set(dropped["translation"])
    # No placeholder survives, and the splits follow the block scheme by position.
    assert not units["text"].is_in(["(aynı)", "-", "상동", "(없음)"]).any()
    one = units.filter(language="eng").sort("position")
    labels = ["dev" if p % 30 < 5 else "test" if p % 30 < 10 else "train" for p in one["position"]]
    assert one["split"].to_list() == labels


def _score(model_path, texts):
    from fairppl.ngram.char import score_units

    scores = score_units(str(model_path), texts, progress=False)
    return sum(s.bits for s in scores), sum(s.n_chars for s in scores)


def test_shuffled_characters_score_clearly_worse(study):
    wd, bpu = study
    rng = random.Random(0)
    for corpus, language in [("bible", "eng"), ("bible", "kor"), ("udhr", "kor")]:
        units = pl.read_parquet(wd / "results" / "corpus" / corpus / "units.parquet").filter(
            language=language)
        if corpus == "bible":
            units = units.filter(split="test")
        texts = units["text"].to_list()
        shuffled = ["".join(rng.sample(t, len(t))) for t in texts]
        # The UDHR is scored with the Bible's model of the same language.
        model = wd / "results" / "ngram" / "bible" / language / "char.o5.kenlm"
        real_bits, n = _score(model, texts)
        shuf_bits, n2 = _score(model, shuffled)
        assert n == n2
        # The pipeline's own number is what we just recomputed (two paths agree).
        row = bpu.filter(corpus=corpus, language=language, model="kenlm-char-o5").row(0, named=True)
        assert real_bits == pytest.approx(row["bits_total"], rel=1e-9)
        # Out of domain (a 4-book Bible model on the UDHR's Korean syllables) the model knows
        # less order to lose: 1.18x when measured, against 1.3x and more in domain.
        factor = 1.25 if corpus == "bible" else 1.1
        assert shuf_bits > factor * real_bits, (corpus, language, real_bits, shuf_bits)


def test_unk_sweep_shows_the_pathology_and_its_correction(study):
    """Naive per-token perplexity of the closed-vocabulary word models rises with the vocabulary
    (smaller vocabularies look better); the correction charges log2(K) bits per <unk>, K the
    distinct OOV types of the units summed; `all` is every train type seen twice."""
    wd, bpu = study
    words = bpu.filter(model="kenlm-word-o3", corpus="bible")
    ngram = wd / "results" / "ngram" / "bible"
    for language in ("eng", "tur", "kor"):
        rows = sorted(words.filter(language=language).iter_rows(named=True),
                      key=lambda r: r["vocab_size"])
        assert len(rows) == 3
        naive = [r["ppl_naive"] for r in rows]
        oov = [r["oov_rate"] for r in rows]
        assert naive[0] < naive[1] < naive[2], (language, naive)
        assert oov[0] > oov[1] > oov[2] > 0, (language, oov)
        record = json.loads((ngram / language / "word-vall.o3.json").read_text())
        assert record["min_count"] == 2 and record["actual"] < record["n_train_types"]
        by_tokenizer = {r["tokenizer"]: r for r in rows}
        assert by_tokenizer["word-vall"]["vocab_size"] == record["actual"]
        texts = pl.read_parquet(wd / "results" / "corpus" / "bible" / "units.parquet").filter(
            language=language, split="test")["text"]
        for vocab_id in ("100", "all"):
            # Corrected = naive + n_unk * log2(K), K the distinct OOV types of the test text.
            scores = pl.read_parquet(wd / "results" / "scores" / "bible" / language /
                                     f"kenlm-word-o3.word-v{vocab_id}.parquet")
            vocab = set(json.loads((ngram / language / f"word-v{vocab_id}.o3.json").read_text())
                        ["words"])
            oov_types = {w for t in texts for w in t.split(" ") if w not in vocab}
            assert set().union(*scores["oov_types"].to_list()) == oov_types
            expected = scores["bits"].sum() + scores["n_oov"].sum() * math.log2(len(oov_types))
            row = by_tokenizer[f"word-v{vocab_id}"]
            assert row["n_oov_types"] == len(oov_types)
            assert row["bits_unk_corrected"] == pytest.approx(expected, rel=1e-12)
            assert row["ppl_unk_corrected"] > row["ppl_naive"]


def test_tokenizers_record_reductions(study):
    wd, _ = study
    tokenizers = pl.read_csv(wd / "results" / "tables" / "tokenizers.csv")
    assert tokenizers.height == 6
    unigram = tokenizers.filter(model_type="unigram")
    # The four short books cannot support 3000 unigram pieces: reduced, recorded, reported.
    assert unigram["reduced"].all() and (unigram["vocab_size"] < 3000).all()
    assert (unigram["vocab_size"] > 260).all()
    report = (wd / "results" / "report.html").read_text(encoding="utf-8")
    assert "vocabulary size requested" in report and "reduced" in report  # readable headers


def test_random_model_costs_about_log2_vocab_per_token(study):
    """A randomly initialised model is close to uniform: about log2(V) bits per token, through the
    same scoring path as every other model."""
    _, bpu = study
    for row in bpu.filter(model="tiny-random").iter_rows(named=True):
        per_token = row["bits_total"] / row["n_tokens"]
        assert abs(per_token - math.log2(row["vocab_size"])) < 0.1 * math.log2(row["vocab_size"])


def test_every_trained_model_prefers_real_text(study):
    """Real test text costs fewer bits than the same text with its characters (words, for the
    closed-vocabulary word model) shuffled, for every model the pipeline trained."""
    from fairppl.lm.pretrained import load_lm
    from fairppl.lm.scoring import score_texts
    from fairppl.ngram.subword import score_piece_units
    from fairppl.ngram.word import score_word_units

    wd, _ = study
    rng = random.Random(1)
    for language in ("eng", "kor"):
        texts = pl.read_parquet(wd / "results" / "corpus" / "bible" / "units.parquet").filter(
            language=language, split="test").sort("position")["text"].to_list()[:20]
        shuffled = ["".join(rng.sample(t, len(t))) for t in texts]
        word_shuffled = [" ".join(rng.sample(t.split(" "), len(t.split(" ")))) for t in texts]
        ngram = wd / "results" / "ngram" / "bible" / language
        costs = {}
        tok = wd / "results" / "tokenizers" / "bible" / language / "spm-unigram-3000.model"
        costs["subword"] = [sum(s.bits for s in score_piece_units(ngram / "spm-unigram-3000.o3.kenlm",
                                                                    tok, x, progress=False))
                            for x in (texts, shuffled)]
        vocab = __import__("json").loads((ngram / "word-v500.o3.json").read_text())["words"]
        costs["word"] = [sum(s.bits for s in score_word_units(ngram / "word-v500.o3.kenlm", x, vocab))
                         for x in (texts, word_shuffled)]
        for tokenizer in ("char", "spm-unigram-3000"):
            model, tk = load_lm(wd / "results" / "neural" / "bible" / language / tokenizer / "model")
            costs[f"transformer/{tokenizer}"] = [
                sum(u.bits for u in score_texts(model, tk, x, progress=False))
                for x in (texts, shuffled)]
        for name, (real, fake) in costs.items():
            assert real < fake, (language, name, real, fake)


def test_cli_agrees_with_pipeline(study):
    wd, bpu = study
    units = pl.read_parquet(wd / "results" / "corpus" / "bible" / "units.parquet").filter(
        split="test").sort("position")
    text = wd / "tur.txt"
    english = wd / "eng.txt"
    text.write_text("\n".join(units.filter(language="tur")["text"]) + "\n", encoding="utf-8")
    english.write_text("\n".join(units.filter(language="eng")["text"]) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [str(VENV_BIN / "fairppl"), "char-ngram", "--quiet", "--model",
         str(wd / "results" / "ngram" / "bible" / "tur" / "char.o5.kenlm"),
         "--text", str(text), "--english", str(english)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split("\t") for line in proc.stdout.strip().splitlines())
    row = bpu.filter(corpus="bible", language="tur", model="kenlm-char-o5").row(0, named=True)
    assert float(out["bits_total"]) == pytest.approx(row["bits_total"], abs=1e-3)
    assert float(out["bpec"]) == pytest.approx(row["bpec"], abs=1e-4)


def test_report_builds(study):
    """Our report (one self-contained page, the answer first) and Snakemake's provenance page."""
    wd, _ = study
    report = (wd / "results" / "report.html").read_text(encoding="utf-8")
    assert report.index("How hard is each language") < report.index("id='answer'") \
        < report.index("id='figure'") < report.index("id='settings'")
    for needle in ("Turkish", "Korean", "Spearman", "paired bootstrap", "data:image/png;base64,",
                   "href='provenance.html'", "Second domain", "UNK-corrected",
                   "Correlates of difficulty", "placeholder", "Scoring conventions"):
        assert needle in report, needle
    assert "None" not in report and ">nan<" not in report
    models = pl.read_csv(wd / "results" / "tables" / "models.csv")
    # One common unit set per corpus, stated in every row.
    assert models.group_by("corpus").agg(pl.col("n_units").n_unique())["n_units"].to_list() \
        == [1] * models["corpus"].n_unique()
    assert models["unit_set"].str.starts_with("common to every language and model").all()
    for row in models.filter(pl.col("open_vocabulary")).iter_rows(named=True):
        assert row["bpec_ci_low"] <= row["bpec"] <= row["bpec_ci_high"], row
    assert models.filter(~pl.col("open_vocabulary"))["bpec"].null_count() == \
        models.filter(~pl.col("open_vocabulary")).height
    proc = snakemake(wd, "--report", "results/provenance.html")
    assert_ok(proc)
    provenance = (wd / "results" / "provenance.html").read_text(encoding="utf-8", errors="replace")
    assert "bpu.csv" in provenance and "main.png" in provenance


def test_marginal_stage_bounds_and_report(study):
    """The marginal stage runs in the default target: per unit, the exact n-gram marginal is at
    least the default score and at least every lower bound (n-best sums distinct paths); the
    comparison tables cover every language, and the report has the section."""
    wd, _ = study
    units = pl.read_parquet(wd / "results" / "tables" / "marginal_units.parquet")
    ngram = units.filter(pl.col("model").str.starts_with("kenlm-subword"))
    exact = ngram.filter(estimator="exact").select("language", "unit_id",
                                                   pl.col("logp").alias("exact"))
    assert exact.height == 3 * 3  # 3 languages x max_units 3
    joined = ngram.join(exact, on=["language", "unit_id"])
    assert (joined["exact"] >= joined["logp_default"] - 1e-9).all()
    bounds = joined.filter(pl.col("estimator").is_in(["nbest", "default"]))
    assert (bounds["logp"] <= bounds["exact"] + 1e-9).all()
    # every LM of the stage: the Transformer over unigram pieces and the sheet's tiny model
    models = set(units["model"])
    assert {"transformer", "tiny-random"} <= models, models
    tiny = units.filter(model="tiny-random", estimator="default")
    assert sorted(tiny["language"]) == ["eng", "kor", "tur"]  # 1 unit per language
    assert tiny["unit_id"].n_unique() == 1  # the same aligned unit in every language
    fair = pl.read_csv(wd / "results" / "tables" / "marginal_fair_bits.csv")
    assert set(fair.filter(model="kenlm-subword-o3")["estimator"]) == {"exact"}
    assert fair.filter(model="kenlm-subword-o3").height == 3
    assert (fair["bits_per_utterance_marginal"]
            <= fair["bits_per_utterance_default"] + 1e-9).all()
    accuracy = pl.read_csv(wd / "results" / "tables" / "marginal_accuracy.csv")
    nbest = accuracy.filter(estimator="nbest", model="kenlm-subword-o3").row(0, named=True)
    assert nbest["above_exact_percent"] == 0.0 and nbest["bias_nats"] <= 0.0
    # Q(default) from the lm-guided runs of every LM of the stage: each block once per unit
    bins = pl.read_csv(wd / "results" / "tables" / "marginal_qdefault_bins.csv")
    assert {"transformer", "tiny-random"} <= set(bins["model"])
    blocks = pl.read_parquet(wd / "results" / "marginal" / "bible" / "eng"
                             / "tiny-random.native.blocks.parquet")
    assert bins.filter(model="tiny-random", language="eng")["n_blocks"].sum() == blocks.height
    lengths = pl.read_csv(wd / "results" / "tables" / "marginal_lengths.csv")
    assert set(lengths["language"]) == {"eng", "kor"} and set(lengths["n_words"]) == {1, 4, 64}
    assert set(lengths["estimator"]) == {"lm-guided", "decoding-free", "wor-1best", "beam"}
    bounds = lengths.filter(pl.col("estimator").is_in(["decoding-free", "beam"]))
    assert bounds["lower_bound"].all() and not lengths.filter(estimator="lm-guided")[
        "lower_bound"].any()
    assert (lengths["gap_nats"] >= -1e-9).all()  # the exact marginal is at least the default
    report = (wd / "results" / "report.html").read_text(encoding="utf-8")
    assert "Estimators by text length" in report
    assert "id='marginal'" in report and "Estimators against the exact marginal" in report
    assert report.index("id='figure'") < report.index("id='marginal'") < report.index(
        "id='settings'")


def test_scoring_conventions_are_recorded(study):
    """Every token-LM scoring job records its conventions beside its scores; the summary page
    groups them per model."""
    wd, _ = study
    import json

    from fairppl.report.html import conventions_table

    records = [json.loads(p.read_text(encoding="utf-8"))
               for p in sorted((wd / "results" / "scores").glob("*/*/*.conventions.json"))]
    runs = {(r["model"], r["tokenizer"], r["language"]) for r in records}
    # tiny-random on 3 Bible languages; transformers over 2 tokenizers on eng and kor.
    assert runs == ({("tiny-random", "native", lang) for lang in ("eng", "tur", "kor")}
                    | {("transformer", tok, lang) for tok in ("char", "spm-unigram-3000")
                       for lang in ("eng", "kor")})
    for r in records:
        assert r["start_token"] == "<s>" and r["end_token"] == "</s>" and r["end_charged"]
        assert r["start_token_role"].startswith("BOS prepended as context")
        assert r["weights"] == "as saved (float32)"
        assert r["dtype"] == "float32"  # config pretrained.dtype's default; Transformers: float32
        assert r["lm_eval_harness"].startswith(
            f"HFLM(prefix_token_id={r['start_token_id']}, add_bos_token=False): "
            f"loglikelihood_rolling = minus the unit's nats less the end token's")
    table = conventions_table(records)
    assert table.height == 3  # one row per (model, tokenizer): conventions agree across languages
    row = table.filter(model="tiny-random").row(0, named=True)
    assert sorted(row["languages"].split()) == ["eng", "kor", "tur"]
    assert row["lm_eval_harness"] == records[[r["model"] for r in records].index(
        "tiny-random")]["lm_eval_harness"]


def test_a_new_sheet_row_plans_no_training(study, tmp_path):
    """The cheap half of test_adding_a_language_is_one_sheet_row (make test-heavy): a UDHR
    language added to the sheet of the built test study plans the UDHR's units, scoring jobs
    and the table, and no training job (a dry run: 4 s instead of 30-40)."""
    wd, _ = study
    copy = tmp_path / "wd"
    shutil.copytree(wd, copy, symlinks=True)  # with .snakemake: params-based rerun triggers
    with (copy / "config" / "languages.tsv").open("a", encoding="utf-8") as handle:
        handle.write("udhr\ttur\ttur\tTurkish\tLatn\ttur\tfalse\n")
    proc = snakemake(copy, "results/tables/bpu.parquet", "-n", "--quiet", "rules")
    assert_ok(proc)
    jobs = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            jobs[parts[0]] = int(parts[1])
    # the UDHR's units again (its scores follow), no tokenizer, model or Bible table rebuilt
    assert jobs.pop("prepare_corpus") == 1 and jobs.pop("bpu_table") == 1
    assert jobs.pop("total") == sum(jobs.values()) + 2
    assert jobs and all(rule.startswith("score_") for rule in jobs), jobs


@pytest.mark.heavy
def test_adding_a_language_is_one_sheet_row(study, tmp_path):
    wd, before = study
    copy = tmp_path / "wd"
    shutil.copytree(wd, copy, symlinks=True)  # with .snakemake: params-based rerun triggers
    with (copy / "config" / "languages.tsv").open("a", encoding="utf-8") as handle:
        handle.write("udhr\ttur\ttur\tTurkish\tLatn\ttur\tfalse\n")
    proc = snakemake(copy, "results/tables/bpu.parquet")
    assert_ok(proc)
    after = pl.read_parquet(copy / "results" / "tables" / "bpu.parquet")
    # The UDHR's Turkish is scored by the Bible's Turkish models (char o5, o7, subword) and the
    # pretrained stand-in, with no new training.
    tur = after.filter(corpus="udhr", language="tur")
    assert tur.height == 4 and (tur["bpec"] > 1).all()
    assert "train_ngram" not in proc.stdout + proc.stderr
    # The Bible did not depend on the UDHR's sheet rows: its numbers are unchanged.
    key = ["corpus", "language", "model"]
    b0 = before.filter(corpus="bible").sort(key)
    b1 = after.filter(corpus="bible").sort(key)
    assert b0.equals(b1)


#: Sheet rows whose source code the corpus lacks, with what the refusal says.
UNKNOWN_SOURCE_CODES = [
    ("bible\tdeu\tdeu\tGerman\tLatn\tQ\tfalse\n",
     "unknown Bible translation code(s) deu: 'Q': expected one of"),
    # tur: a Bible language, so its UDHR row has models to score it (refused otherwise)
    ("udhr\ttur\ttur\tTurkish\tLatn\ttur_2000\tfalse\n",
     "unknown UDHR declaration code 'tur_2000' (language tur)"),
]


@ahead("test_unknown_source_code_is_reported", fixtures=("resources_ready",))
def unknown_source_code_runs(folder, resources_ready):
    """Each case's run of test_unknown_source_code_is_reported: (its folder, the run), by row."""
    runs = {}
    for n, (row, _) in enumerate(UNKNOWN_SOURCE_CODES):
        wd = make_workdir(folder / f"wd{n}", ROOT / "tests" / "config")
        with (wd / "config" / "languages.tsv").open("a", encoding="utf-8") as handle:
            handle.write(row)
        corpus = row.split("\t")[0]
        runs[row] = wd, snakemake(wd, f"results/corpus/{corpus}/units.parquet")
    return runs


@pytest.mark.parametrize("row, expected", UNKNOWN_SOURCE_CODES)
def test_unknown_source_code_is_reported(request, resources_ready, row, expected):
    wd, proc = unknown_source_code_runs.result(request)[row]  # run ahead
    corpus = row.split("\t")[0]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert expected in out, out[-3000:]
    assert not (wd / "results" / "corpus" / corpus / "units.parquet").exists()


@ahead("test_morphology_tables_on_five_languages", fixtures=("resources_ready",))
def five_languages(folder, resources_ready):
    """The run of test_morphology_tables_on_five_languages, done ahead: its working folder."""
    import yaml

    copy = make_workdir(folder / "wd", ROOT / "tests" / "config")
    path = copy / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    cfg["corpora"]["udhr"]["enabled"] = False
    cfg["char_ngram"]["orders"] = [5]
    for block in ("tokenizers", "word_ngram", "subword_ngram", "neural", "marginal", "shannon"):
        cfg[block]["corpora"] = []
    cfg["lemmas"]["neural_languages"] = []
    cfg["morphology"]["apertium_languages"] = ["eng", "spa"]
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    with (copy / "config" / "languages.tsv").open("a", encoding="utf-8") as handle:
        handle.write("bible\tdeu\tdeu\tGerman\tLatn\ts\tfalse\n")
        handle.write("bible\tspa\tspa\tSpanish\tLatn\tv\tfalse\n")
    targets = ["results/tables/morphology.csv", "results/tables/difficulty.csv",
               "results/tables/fairness.csv", "results/report.html"]
    assert_ok(snakemake(copy, *targets))
    return copy


def test_morphology_tables_on_five_languages(request, resources_ready):
    """The test config with German and Spanish added to the Bible's sheet (published MCC for
    eng, deu, spa; simplemma for all but Korean) and only the character 5-gram trained, so the
    whole chain runs in half a minute (done ahead, :func:`five_languages`): the morphology
    tables, the regressions recomputed from the per-language table with scipy, BPEC on words and
    lemmas recomputed from the per-unit scores, and the difficulty model's normalisation."""
    import numpy as np
    from scipy.stats import pearsonr

    from fairppl.morphology.languages import bpec_column

    copy = five_languages.result(request)
    tables = copy / "results" / "tables"
    languages = pl.read_csv(tables / "morphology_languages.csv", infer_schema_length=None)
    published = languages.filter(measure="mcc", source="published")
    values = dict(zip(published["language"], published["value"]))
    assert values == {"eng": 6.0, "tur": None, "kor": None, "deu": 38.0, "spa": 71.0}
    assert "no published mcc value for kor" in published.filter(language="kor")["note"][0]
    korean = languages.filter(language="kor")["lemmas_note"][0]
    assert "Korean" in korean or "kor" in korean  # no lemmatizer, with the reason

    # BPEC on words and lemmas of the character 5-gram, recomputed from the per-unit scores on
    # the units every language scored on both texts, over the original English characters.
    units = pl.read_parquet(copy / "results" / "corpus" / "bible" / "units.parquet")
    english = dict(units.filter(pl.col("english_reference")).select(
        "unit_id", pl.col("text").str.len_chars()).rows())
    frames = {}
    for lang in ("eng", "tur", "kor", "deu", "spa"):
        frames[(lang, "words")] = pl.read_parquet(
            copy / "results" / "scores" / "bible" / lang / "kenlm-char-o5.char.parquet")
        lemma = copy / "results" / "scores" / "bible-lemmas" / lang / "kenlm-char-o5.char.parquet"
        if lemma.exists():
            frames[(lang, "lemmas")] = pl.read_parquet(lemma)
    assert ("kor", "lemmas") not in frames and ("deu", "lemmas") in frames
    common = set.intersection(*(set(f["unit_id"]) for f in frames.values()))
    row = languages.filter(language="deu", measure="mcc", source="published").row(0, named=True)
    for text in ("words", "lemmas"):
        scores = frames[("deu", text)].filter(pl.col("unit_id").is_in(sorted(common)))
        expected = scores["bits"].sum() / sum(english[u] for u in scores["unit_id"])
        assert row[bpec_column(text, "kenlm-char-o5", "char")] == pytest.approx(expected)
    assert row[bpec_column("lemmas", "kenlm-char-o5", "char")] < row[
        bpec_column("words", "kenlm-char-o5", "char")]

    # The regression rows come from the per-language table and nothing else.
    regressions = pl.read_csv(tables / "morphology.csv", infer_schema_length=None)
    for text in ("words", "lemmas", "difference"):
        fit = regressions.filter(model="kenlm-char-o5", tokenizer="char", measure="mcc",
                                 source="published", text=text).row(0, named=True)
        lemmas = bpec_column("lemmas", "kenlm-char-o5", "char")
        words = bpec_column("words", "kenlm-char-o5", "char")
        data = published.filter(pl.col("value").is_not_null()).sort("language")
        y = {"words": data[words], "lemmas": data[lemmas],
             "difference": data[words] - data[lemmas]}[text].to_numpy()
        x = data["value"].to_numpy()
        assert fit["n_languages"] == 3
        assert fit["slope"] == pytest.approx(np.polyfit(x, y, 1)[0])
        assert fit["pearson_r"] == pytest.approx(pearsonr(x, y).statistic)
        # Three languages: 6 permutations, none rejects at 5%: the interval is unbounded, said
        # in the note; the p-values are adjusted over every regression of the question.
        assert fit["slope_low"] is None and "slope interval unbounded" in fit["note"]
        assert fit["permutations"] == 6
        assert fit["test_family"] == "morphology-cost"
        assert fit["permutation_p_bh"] >= fit["permutation_p"]
    # Apertium's MCC in this config: eng and spa only of the sheet's languages: no fit.
    short = regressions.filter(source="apertium", measure="mcc", text="words").row(0, named=True)
    assert short["slope"] is None and "fewer than 3 languages" in short["note"]

    # Difficulty: every Bible unit each model scored, the authors' Model 2; the difficulties
    # average 1 over the languages, as the authors normalised them.
    difficulty = pl.read_csv(tables / "difficulty.csv", infer_schema_length=None)
    char = difficulty.filter(model="kenlm-char-o5", tokenizer="char")
    assert char.height == 5
    assert char["difficulty"].mean() == pytest.approx(1.0)
    assert set(char["difficulty_model"]) == {"heteroscedastic"}
    assert set(char["normalisation"]) == {"arithmetic"}
    assert set(char["n_units"]) == {frames[("eng", "words")].height}
    assert (char["difficulty_low"] < char["difficulty"]).all()
    assert (char["difficulty"] < char["difficulty_high"]).all()
    report = (copy / "results" / "report.html").read_text(encoding="utf-8")
    assert "Why languages differ" in report and "MCC by source" in report
