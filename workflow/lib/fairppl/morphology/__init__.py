"""Why some languages are harder: morphological counting complexity (MCC) from the published
values, Apertium's paradigms and UniMorph lexicons, forms per lemma, lemmatized copies of the
multi-text, regressions of BPEC on each morphology measure, and the per-language difficulty model
of Mielke et al. (2019).

May import: :mod:`fairppl.core`, :mod:`fairppl.config`, :mod:`fairppl.corpus`,
:mod:`fairppl.stats` (metrics, bootstrap, correlates) and :mod:`fairppl.marginal` (its tables).
"""

#: The stage's tables: name -> CSV under results/tables (the workflow's rules and the report
#: read them by these names; kept here, free of imports, for the Snakefile's parse).
TABLES = {
    "mcc": "mcc.csv",
    "mcc_validation": "mcc_validation.csv",
    "forms_per_lemma": "forms_per_lemma.csv",
    "lemmatizer_coverage": "lemmatizer_coverage.csv",
    "languages": "morphology_languages.csv",
    "regressions": "morphology.csv",
    "difficulty": "difficulty.csv",
    "agreement": "difficulty_agreement.csv",
    "predictors": "difficulty_predictors.csv",
    "fairness": "fairness.csv",
    "premium": "tokenizer_premium.csv",
    "mielke_bible": "difficulty_mielke_bible.csv",
    "mielke_bible_rows": "difficulty_mielke_bible_rows.csv",
    "translations": "difficulty_translations.csv",
    "translation_rows": "difficulty_translations_rows.csv",
}
