"""Reduced precision for the pretrained LMs (config ``pretrained.dtype``): the schema, the loader,
the conventions record and the start-up check against the measured errors
(fairppl.lm.precision; docs/study.md, "Precision")."""

from types import SimpleNamespace

import pytest
import torch
import yaml

from conftest import ROOT, TINY_VOCAB_TEXT
from fairppl.config.settings import check_config
from fairppl.core.errors import InputError
from fairppl.lm import precision
from fairppl.lm.cache import load_lm
from fairppl.lm.precision import absorbed, check_dtype, marginal_runs_pretrained
from fairppl.lm.scoring import conventions, score_texts

SCHEMA = str(ROOT / "workflow" / "schemas" / "config.schema.yaml")
SOURCE = "config/config.yaml"


def Model(corpora):
    """A model sheet row, as far as marginal_runs_pretrained reads it."""
    return SimpleNamespace(corpora=corpora)


def default_config():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))


def refused(config, models, marginal, pattern):
    """check_dtype raises InputError matching ``pattern``."""
    with pytest.raises(InputError, match=pattern):
        check_dtype(config, SOURCE, models, marginal)


def test_the_schema_takes_three_precisions_and_names_the_field():
    config = default_config()
    assert config["pretrained"]["dtype"] == "float32"
    for dtype in ("float32", "bfloat16", "float16"):
        config["pretrained"]["dtype"] = dtype
        check_config(config, SCHEMA, SOURCE)
    config["pretrained"]["dtype"] = "float64"
    with pytest.raises(InputError, match=r"field 'pretrained.dtype': 'float64' is not one of "
                                         r"\['float32', 'bfloat16', 'float16'\]"):
        check_config(config, SCHEMA, SOURCE)


def test_load_lm_runs_each_precision_on_a_cpu_and_records_it(tiny_model):
    """bfloat16 and float16 are allowed on a CPU (torch runs both; docs/benchmarks.md gives
    their speed there): the model is loaded in the precision, the log-probabilities stay float32
    and the conventions record says which precision ran."""
    folder = tiny_model
    texts = [TINY_VOCAB_TEXT[:40], TINY_VOCAB_TEXT[10:25]]
    base = None
    for dtype in ("float32", "bfloat16", "float16"):
        model, tok = load_lm(folder, device="cpu", dtype=dtype)
        assert next(model.parameters()).dtype == getattr(torch, dtype)
        conv = conventions(tok, model)
        assert conv["dtype"] == dtype
        assert conv["precision"] == (f"{dtype} weights and forward pass; float32 -log_softmax "
                                     f"at the target (fused cross-entropy)")
        nats = [u.nats for u in score_texts(model, tok, texts, progress=False)]
        base = base or nats
        # a random character model: each character costs about log(vocabulary) nats; the
        # precisions agree to 1%
        assert nats == pytest.approx(base, rel=1e-2)
    with pytest.raises(ValueError, match=r"dtype 'float64': expected one of float32, "
                                         r"bfloat16, float16"):
        load_lm(folder, device="cpu", dtype="float64")


MODELS = ["smollm2-135m", "gemma3-270m"]


def test_the_measured_errors_decide_each_precision():
    # every model of the default sheet was measured (bench/bench_dtype.py) in both precisions
    for model in MODELS:
        assert set(precision.MEASURED[model]) == {"bfloat16", "float16"}
        assert all(v > 0 for v in precision.REFERENCE[model].values())
    assert "overflow" in precision.MEASURED["gemma3-270m"]["float16"]
    # bfloat16 fits the paired intervals of the default 100 units, not those of the whole test
    # split, nor the marginal gap's at K=32; float16 fits both for SmolLM2: the decisions
    # docs/study.md, "Precision", explains
    for model in MODELS:
        assert absorbed(model, "bfloat16", 100, 32)["ranking"][2], model
        verdict = absorbed(model, "bfloat16", precision.ALL_UNITS, 32)
        assert not verdict["ranking"][2] and not verdict["gap"][2], (model, verdict)
    assert all(ok for _, _, ok in absorbed("smollm2-135m", "float16", precision.ALL_UNITS,
                                           32).values())


def test_start_up_refuses_bfloat16_only_where_the_marginal_runs_the_pretrained_lms():
    config = default_config()
    sheet = [Model(["bible"])]
    assert marginal_runs_pretrained(config, sheet)
    config["pretrained"]["dtype"] = "bfloat16"
    shift, half, _ = absorbed("smollm2-135m", "bfloat16", 100, 32)["gap"]
    with pytest.raises(InputError) as err:
        check_dtype(config, SOURCE, MODELS, marginal_runs_pretrained(config, sheet))
    assert str(err.value) == (
        f"config/config.yaml: field 'pretrained.dtype': bfloat16 moves a verse's marginal gap by "
        f"{shift:.3f} bits on average for model 'smollm2-135m' (docs/benchmarks.md, \"Reduced "
        f"precision\"), more than the half-width of the gap's Monte Carlo interval at marginal.K "
        f"32 ({half:.3f} bits): the report's marginal section could not tell the gap from the "
        f"precision's error; expected float32 while the marginal stage runs the pretrained LMs "
        f"(or marginal.lm.estimators: [] to leave them out of it)")
    # without the pretrained LMs in the marginal stage, bfloat16 scoring of 100 units is
    # absorbed; of the whole split (scoring.max_units: null) it is not
    config["marginal"]["lm"]["estimators"] = []
    assert not marginal_runs_pretrained(config, sheet)
    check_dtype(config, SOURCE, MODELS, False)
    config["scoring"]["max_units"] = None
    refused(config, MODELS, False, r"bfloat16 shifts the difference of two languages' bits "
                                   r"per verse by up to 3.090 bits for model 'smollm2-135m'")
    assert not marginal_runs_pretrained(default_config(), [Model(["udhr"])])


def test_start_up_refuses_float16_for_gemma_and_an_unmeasured_model():
    config = default_config()
    config["pretrained"]["dtype"] = "float16"
    check_dtype(config, SOURCE, ["smollm2-135m"], False)
    refused(config, MODELS, False, (
        r"^config/config.yaml: field 'pretrained.dtype': model 'gemma3-270m' overflows in "
        r"float16: NaN log-probabilities on Bible verses \(activations beyond float16's "
        r"range\) \(docs/benchmarks.md, \"Reduced precision\"\); expected float32 or a "
        r"precision measured to work for every model of the sheet$"))
    refused(config, ["tiny-random"], False, (
        r"field 'pretrained.dtype': float16 was never measured against float32 for model "
        r"'tiny-random', so the report could not say what it moves; expected float32, or "
        r"measure it with bench/bench_dtype.py and add its figures to "
        r"fairppl.lm.precision.MEASURED$"))
    config["pretrained"]["dtype"] = "float32"
    check_dtype(config, SOURCE, ["tiny-random"], True)  # float32 needs no measurement


def test_start_up_refuses_a_shift_beyond_the_paired_intervals(monkeypatch):
    """The paired intervals narrow with the units scored; a shift that fits at 20 units can
    exceed them at the whole split (scoring.max_units: null)."""
    ref = precision.REFERENCE["smollm2-135m"]["pair_half_bits"]
    half_all = ref * (precision.REFERENCE_UNITS / precision.ALL_UNITS) ** 0.5
    monkeypatch.setitem(precision.MEASURED["smollm2-135m"], "float16",
                        {"pair_shift_bits": 1.5 * half_all, "gap_shift_bits": 0.0})
    config = default_config()
    config["pretrained"]["dtype"] = "float16"
    config["scoring"]["max_units"] = 20
    check_dtype(config, SOURCE, ["smollm2-135m"], True)
    config["scoring"]["max_units"] = None
    refused(config, ["smollm2-135m"], True, (
        rf"field 'pretrained.dtype': float16 shifts the difference of two languages' bits "
        rf"per verse by up to {1.5 * half_all:.3f} bits for model 'smollm2-135m' .* more "
        rf"than the half-width of its paired interval at scoring.max_units 5000 "
        rf"\({half_all:.3f} bits\)"))


def test_the_report_states_the_precision_and_its_measured_shift():
    from fairppl.report.settings import settings_sentences
    from fairppl.stats.bootstrap import BootstrapSettings

    models = [{"model": "smollm2-135m", "source": "pypi-gguf", "spec": "x.gguf",
               "description": "SmolLM2", "languages": ["eng"]}]
    sentences = settings_sentences({"models": models, "pretrained": {"dtype": "float32"}}, None,
                                   BootstrapSettings())
    assert ("The pretrained LMs ran in float32 (weights, forward passes, log-probabilities)."
            in sentences)
    m = precision.MEASURED["smollm2-135m"]["bfloat16"]
    half = precision.REFERENCE["smollm2-135m"]["pair_half_bits"]
    sentences = settings_sentences({"models": models, "pretrained": {"dtype": "bfloat16"}},
                                   None, BootstrapSettings())
    said = [s for s in sentences if s.startswith("The pretrained LMs ran in bfloat16")]
    assert said == [
        f"The pretrained LMs ran in bfloat16 (weights and forward passes; log-probabilities in "
        f"float32). Against float32 it was measured (docs/benchmarks.md, \"Reduced precision\") "
        f"to shift the difference of two languages' bits per verse and a verse's marginal gap "
        f"(mean) by: smollm2-135m up to {m['pair_shift_bits']:.3f} bits (paired half-width "
        f"{half:.1f} bits at 20 units) and {m['gap_shift_bits']:.3f} bits. The study starts only "
        f"where these fit inside the intervals they sit in (the paired ones narrow as one over "
        f"the square root of the units scored, the gap's as one over that of K)."]
    # no pretrained LM in the sheet: no sentence about their precision
    assert not [s for s in settings_sentences({"pretrained": {"dtype": "bfloat16"}}, None,
                                              BootstrapSettings()) if "ran in" in s]
