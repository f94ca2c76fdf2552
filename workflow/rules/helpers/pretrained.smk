# The named helpers of pretrained.smk's rules: their input functions, parameters and targets.


def model_spec(wildcards):
    """The model sheet's spec of a pypi-gguf model."""
    resolved = RESOLVED[wildcards.model]
    return f"{resolved.requirement}#{resolved.gguf_member}"


def model_hub_id(wildcards):
    """The model sheet's hub id of an `hf` model."""
    resolved = RESOLVED[wildcards.model]
    if resolved.source != "hf":
        raise WorkflowError(f"model {wildcards.model!r} is not a hub model (source hf)")
    return resolved.spec


def model_gguf_file(wildcards):
    """The .gguf file name inside resources/models/{model}/gguf."""
    return RESOLVED[wildcards.model].gguf_file


def model_special_tokens(wildcards):
    """The model sheet's start/end tokens of a pretrained model, with their sheet line."""
    return RESOLVED[wildcards.model].special_tokens()


def model_check_units(wildcards):
    """Prepared units of the enabled corpora a pretrained model scores: its converted tokenizer
    is checked against the GGUF's own on their first verses when the model is cached."""
    row = next(r for r in MODELS if r.model == wildcards.model)
    corpora = [c for c in row.corpora if c in ENABLED]
    return expand("results/corpus/{corpus}/units.parquet", corpus=corpora)


def model_check_languages(wildcards):
    """Languages whose first verses check a pretrained model's tokenizer (`all`: every one)."""
    return next(r for r in MODELS if r.model == wildcards.model).languages


def model_load_from(wildcards):
    """The folder a pretrained model is loaded from."""
    return RESOLVED[wildcards.model].load_from


def pretrained_inputs(wildcards):
    """Inputs of score_pretrained: the units and the model folder (a hub model's downloaded
    copy included)."""
    return {
        "units": f"results/corpus/{wildcards.corpus}/units.parquet",
        "model": RESOLVED[wildcards.model].load_from,
    }
