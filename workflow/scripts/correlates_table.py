"""Correlates of difficulty: per language, properties of its text (characters, words, word types,
type/token ratio on the whole text and on the first N words, mean word length, UTF-8 bytes per
character, characters per English character, OOV rate at a fixed vocabulary, word unigram
entropy, pieces per word and premium over English of each SentencePiece tokenizer), all on the
units common to the languages of the corpus's common unit set (corpora.<id>.common_min_share),
the unseen-character rate against the models' train split, and their Spearman correlation with
each model's BPEC on all the units that model scored (as the report's answer ranks the
languages)."""

import logging

import polars as pl

from fairppl.stats.correlates import feature_correlations, language_features
from fairppl.core.io import write_table


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    units = pl.concat([pl.read_parquet(p) for p in snakemake.input.units], how="vertical_relaxed")
    tokenizers = {tuple(key.split("/")): path
                  for key, path in zip(snakemake.params.tokenizer_keys, snakemake.input.tokenizers)}
    features = language_features(units, vocab_size=snakemake.params.vocab_size,
                                 tokenizers=tokenizers,
                                 train_corpora=snakemake.params.train_corpora,
                                 eval_splits=snakemake.params.eval_splits,
                                 min_share=snakemake.params.common_min_share)
    correlations = feature_correlations(features, pl.read_parquet(snakemake.input.bpu))
    logging.info("%d languages, %d correlations", features.height, correlations.height)
    for corpus, language, why in features.filter(
            pl.col("features_missing_reason").is_not_null()).select(
            "corpus", "language", "features_missing_reason").rows():
        logging.info("%s/%s: text properties missing: %s", corpus, language, why)
    write_table(features, csv=snakemake.output.features)
    write_table(correlations, csv=snakemake.output.correlations)


if "snakemake" in globals():
    main(snakemake)
