# The named helpers of lemmas.smk's rules: their targets and parameters.

from fairppl.morphology.lemmatize import (
    check_lemma_config,
    lemma_neural_languages,
    lemmatizer_for,
)

try:
    check_lemma_config(config, LANGUAGES, CONFIG_SOURCE)
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None


def lemma_rows():
    """Sheet rows of the enabled corpora of lemmas.corpora that simplemma covers and whose
    training corpus has the language (the UDHR's Russian has no Bible model in the test config).
    """
    wanted = config["lemmas"]["corpora"]
    return [
        row
        for row in STUDY_LANGUAGES
        if row.corpus in wanted
        and lemmatizer_for(row.language).covered
        and has_trained_models(row)
    ]


def lemma_coverage_files():
    """The coverage table written beside each lemmatized corpus."""
    return [
        f"results/corpus/{corpus}-lemmas/coverage.csv"
        for corpus in config["lemmas"]["corpora"]
        if corpus in ENABLED
    ]


def lemma_score_files():
    """Per-unit scores of the models retrained on lemmas: the character n-grams (when
    lemmas.char_ngram) and the Transformers over characters of lemma_neural_languages().
    """
    files = []
    neural = lemma_neural_languages(config)
    for row in lemma_rows():
        language = row.language
        folder = f"results/scores/{row.corpus}-lemmas/{language}"
        if config["lemmas"]["char_ngram"]:
            files += [
                f"{folder}/kenlm-char-o{order}.char.parquet"
                for order in config["char_ngram"]["orders"]
            ]
        if language in neural:
            files.append(f"{folder}/transformer.char.parquet")
    return files


def study_languages():
    """Language ids of the enabled corpora, in sheet order, each once."""
    return list(dict.fromkeys(row.language for row in STUDY_LANGUAGES))


def lemma_outputs():
    """Everything the lemma stage makes (the target `lemmas`)."""
    return [
        "results/tables/lemmatizer_coverage.csv",
        "results/tables/forms_per_lemma.csv",
    ] + lemma_score_files()
