# The named helpers of neural.smk's rules: their input functions, parameters and targets.


def neural_inputs(wildcards):
    """Inputs of train_neural: the units, and the SentencePiece model unless `char`."""
    inputs = {"units": f"results/corpus/{wildcards.corpus}/units.parquet"}
    if wildcards.tokenizer != "char":
        inputs["tokenizer"] = (
            f"results/tokenizers/{wildcards.corpus}/{wildcards.language}/{wildcards.tokenizer}.model"
        )
    return inputs


def neural_hyperparameters():
    """fairppl.neural.NeuralConfig fields from the config's `neural` block."""
    keys = (
        "d_model",
        "n_layers",
        "n_heads",
        "d_ff",
        "context",
        "batch_size",
        "steps",
        "lr",
    )
    keys += ("seed", "checkpoint_every")
    return {k: config["neural"][k] for k in keys if k in config["neural"]}
