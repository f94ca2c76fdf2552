# The named helpers of shannon.smk's rules: which bettors play which language, their inputs and
# parameters, and the stage's outputs for the report.

# Published values of Bimbot et al. (Le Monde), shipped with the workflow (not a study output).
PUBLISHED_SHANNON = str(
    Path(workflow.basedir) / "resources" / "published" / "shannon_bimbot.tsv"
)


def shannon_block():
    """The `shannon` config block (the schema's defaults filled in)."""
    return config.get("shannon", {})


def shannon_languages():
    """Sheet rows of the enabled corpora that play the Shannon game."""
    block = shannon_block()
    return [
        row
        for row in STUDY_LANGUAGES
        if row.corpus in block.get("corpora", [])
        and row.language in block.get("languages", [])
    ]


def shannon_bettors(row):
    """(model, tokenizer) of every bettor of a sheet row: the word n-gram of the game's
    vocabulary and the eq. 7 bigram (both over words), the Transformers, the pretrained LMs.
    """
    block = shannon_block()
    wanted = block.get("bettors", [])
    words = f"word-v{block['vocab_size']}"
    runs = []
    if "kenlm-word" in wanted:
        runs.append((f"kenlm-word-o{config['word_ngram']['order']}", words))
    if "bigram" in wanted:
        runs.append(("bigram-eq7", words))
    pretrained_languages = block.get("pretrained_languages")
    pretrained_models = block.get("pretrained_models")
    for model, tok in token_lm_runs(row):
        kind = "transformer" if model == "transformer" else "pretrained"
        if kind == "pretrained" and pretrained_languages is not None:
            if row.language not in pretrained_languages:
                continue
        if kind == "pretrained" and pretrained_models is not None:
            if model not in pretrained_models:
                continue
        if kind in wanted:
            runs.append((model, tok))
    return runs


def shannon_files():
    """Per-truncation bet summaries of every (corpus, language, bettor) of the game."""
    return [
        f"results/shannon/{row.corpus}/{row.language}/{model}.{tok}.parquet"
        for row in shannon_languages()
        for model, tok in shannon_bettors(row)
    ]


def shannon_outputs():
    """The stage's tables and figure (none when no language plays), and the players' table
    where ``shannon.players`` lists any."""
    if not shannon_files():
        return {}
    outputs = {
        "table": "results/tables/shannon.csv",
        "ranks": "results/tables/shannon_ranks.csv",
        "figure": "results/figures/shannon.png",
    }
    if shannon_players():
        outputs["players"] = "results/tables/shannon_players.csv"
    return outputs


def shannon_players():
    """The entries of ``shannon.players`` (checked at start-up: each bets file exists)."""
    from fairppl.shannon.players import check_players

    return check_players(shannon_block().get("players") or [], CONFIG_SOURCE)


def shannon_players_inputs(wildcards):
    """Each player's bets file, its campaign's settings and its models' bets files."""
    from fairppl.shannon.players import bets_file

    inputs = []
    for entry in shannon_players():
        campaign = Path(entry["campaign"])
        inputs += [str(bets_file(entry)), str(campaign / "campaign.json")]
        inputs += sorted(str(p) for p in (campaign / "models").glob("*.jsonl"))
    return sorted(set(inputs))


def shannon_kind(wildcards):
    """Which bettor a job runs: kenlm-word, bigram, transformer or pretrained."""
    if wildcards.model.startswith("kenlm-word-o"):
        return "kenlm-word"
    if wildcards.model == "bigram-eq7":
        return "bigram"
    if wildcards.model == "transformer":
        return "transformer"
    return "pretrained"


# Units per language of each bettor's kind (config shannon) and the default study's, at which
# shannon_bets's minutes were measured: its runtime scales with the first over the second.
SHANNON_UNITS_KEY = {
    "kenlm-word": ("max_units", 100),
    "bigram": ("max_units", 100),
    "transformer": ("neural_max_units", 10),
    "pretrained": ("pretrained_max_units", 1),
}


def shannon_units(wildcards):
    """Units per language the job's bettor plays on (null: the whole split)."""
    key, _ = SHANNON_UNITS_KEY[shannon_kind(wildcards)]
    return config["shannon"][key]


def shannon_reference_units(wildcards):
    """The default study's units of the job's bettor kind (shannon_bets's measured minutes)."""
    return SHANNON_UNITS_KEY[shannon_kind(wildcards)][1]


def shannon_gpus(wildcards):
    """GPUs of a bettor's job: the neural and pretrained LMs run on one where the site has GPUs
    (config resources.gpu), the n-gram bettors never."""
    return GPUS if shannon_kind(wildcards) in ("transformer", "pretrained") else 0


def shannon_bets_inputs(wildcards):
    """Inputs of shannon_bets: the units, and the bettor's model (a KenLM word n-gram, a trained
    Transformer's folder, or a pretrained model's unless it is a hub id); the bigram trains in
    the job."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    kind = shannon_kind(wildcards)
    if kind == "kenlm-word":
        order = wildcards.model.removeprefix("kenlm-word-o")
        pattern = "results/ngram/{corpus}/{language}/{tokenizer}.o{order}.kenlm"
        inputs["model"] = trained_on(pattern.replace("{order}", order))(wildcards)
    elif kind == "transformer":
        inputs["model"] = trained_on(
            "results/neural/{corpus}/{language}/{tokenizer}/model"
        )(wildcards)
    elif kind == "pretrained":
        inputs["model"] = RESOLVED[wildcards.model].load_from
    return inputs


def shannon_train_units(wildcards):
    """The units table whose train (and dev) split gives the game's vocabulary and trains the
    bigram: the corpus that trains the language's models."""
    return trained_on("results/corpus/{corpus}/units.parquet")(wildcards)


def shannon_load_from(wildcards):
    """The folder a token bettor's model is loaded from; none otherwise."""
    kind = shannon_kind(wildcards)
    if kind == "transformer":
        return shannon_bets_inputs(wildcards)["model"]
    if kind == "pretrained":
        return RESOLVED[wildcards.model].load_from
    return ""


def shannon_special(wildcards):
    """The model sheet's start/end tokens of a pretrained bettor; none for the others."""
    if shannon_kind(wildcards) == "pretrained":
        return RESOLVED[wildcards.model].special_tokens()
    return {}


def shannon_model_constraint():
    """Wildcard constraint of a bettor's model id."""
    return "|".join(
        [r"kenlm-word-o\d+", "bigram-eq7", "transformer", *sorted(RESOLVED)]
    )


def shannon_settings():
    """The settings every job and the table share."""
    block = shannon_block()
    keys = (
        "vocab_size",
        "list_lengths",
        "n_t",
        "n_draws",
        "seed",
        "bigram_alphas",
        "max_unit_chars",
        "max_units",
        "neural_max_units",
        "pretrained_max_units",
    )
    return {k: block[k] for k in keys if k in block}
