"""A pretrained model's fast-loading transformers folder: made once from its .gguf, then loaded.

GGUF models load slowly (the file is parsed and the tokenizer converted on every load;
docs/benchmarks.md, "Converting the pretrained models") and refuse ``save_pretrained``.
:func:`cache_hf_copy` converts the .gguf installed by
:func:`fairppl.lm.gguf_install.install_gguf` once into a plain float32 transformers folder, checked
and written atomically with a provenance record (``PROVENANCE_FILE``); the copy reloads in
seconds. Its weights are the GGUF's *dequantised* quantised weights (Q4_1, Q4_K_M), not the
original bf16 checkpoint. :func:`load_lm` loads any transformers folder (or a cached hub id) in
float32, in eval mode; :func:`weights_note` says in words where the weights came from.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..core.errors import InputError
from ..core.integrity import verify
from ..core.io import atomic_dir
from .special_tokens import check_special_tokens

#: Written next to the cached transformers copy: what it was made from.
PROVENANCE_FILE = "fairppl_source.json"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextmanager
def shared_gguf_reader() -> Iterator[None]:
    """Within the block, transformers opens each .gguf file once, however often it loads it.

    transformers (5.23, pinned in pyproject.toml) reads a .gguf in ``load_gguf_checkpoint``
    (``transformers/modeling_gguf_pytorch_utils.py``), which imports ``GGUFReader`` from gguf-py
    at each call and opens the file anew: once for a tokenizer, twice for a model (its config,
    then its weights). Opening a file maps every string of its vocabulary (262,144 for
    Gemma-3) into a numpy view, which is slow, so this block swaps ``gguf.GGUFReader`` for a
    function that keeps one reader per (file, mode) and gives the original back on leaving.
    The readers are read-only memory maps; transformers copies every tensor it dequantises out
    of them.
    """
    import gguf

    original = gguf.GGUFReader
    readers: dict = {}

    def reader(path, mode="r"):
        key = (os.path.realpath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = reader
    try:
        yield
    finally:
        gguf.GGUFReader = original
        readers.clear()


def cache_hf_copy(gguf_folder: str | os.PathLike, gguf_file: str, out_dir: str | os.PathLike,
                  *, texts: Sequence[str] = (), special: dict | None = None,
                  log=sys.stderr) -> Path:
    """Load ``gguf_folder/gguf_file`` with transformers (dequantised to float32) and save the
    model and its tokenizer as a plain transformers folder ``out_dir``; return ``out_dir``.

    GGUF models refuse ``save_pretrained``, so the config is copied without its
    ``quantization_config``, a fresh model is built from it and given the GGUF model's state
    dict (strictly: every tensor must match). The folder is written under a temporary name
    beside ``out_dir`` and swapped into place (:func:`fairppl.core.io.atomic_dir`), so a killed job
    leaves no half-written copy.
    ``out_dir/fairppl_source.json`` records the .gguf's name, size and sha256. Runs offline
    (``HF_HUB_OFFLINE=1`` is set for the call).

    Before the (slow) model conversion, the converted tokenizer is checked against a reference
    built from the GGUF (:func:`fairppl.lm.canonical.check_canonical`, on its edge texts and
    ``texts``; a byte-level pre-tokenizer that lacks the file's digit split is repaired first);
    a mismatch raises TokenizationError and nothing is written. ``special`` (the keyword
    arguments of :func:`check_special_tokens`) checks the sheet's start/end tokens. The check,
    any repair, and the BOS/EOS the GGUF names are recorded in ``fairppl_source.json``.
    """
    gguf_folder, out_dir = Path(gguf_folder), Path(out_dir)
    gguf_path = gguf_folder / gguf_file
    if not gguf_path.is_file():
        raise InputError("GGUF file not found: expected the file written by install_gguf",
                         path=str(gguf_path))
    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        with shared_gguf_reader():
            return _convert(gguf_folder, gguf_file, gguf_path, out_dir, texts=texts,
                            special=special, log=log)
    finally:
        if old is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = old


def _convert(gguf_folder: Path, gguf_file: str, gguf_path: Path, out_dir: Path, *,
             texts: Sequence[str], special: dict | None, log) -> Path:
    """The body of :func:`cache_hf_copy`, offline and with one reader per .gguf file."""
    from .canonical import check_canonical, read_gguf_tokenizer, repair_pre_tokenizer

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_folder), gguf_file=gguf_file)
    if special is not None:
        check_special_tokens(tokenizer, **special)
    meta = read_gguf_tokenizer(gguf_path)
    repaired = repair_pre_tokenizer(tokenizer, meta)
    if repaired:
        print(f"tokenizer repaired: {repaired}", file=log, flush=True)
    model_name = (special or {}).get("model") or gguf_file
    check = check_canonical(tokenizer, gguf_path, texts, model=model_name, meta=meta)
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
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        provenance = {"gguf_file": gguf_file, "gguf_bytes": gguf_path.stat().st_size,
                      "gguf_sha256": _sha256(gguf_path), "dtype": "float32",
                      "note": "weights dequantised from the GGUF file by transformers",
                      **named, "tokenization_check": check}
        (tmp / PROVENANCE_FILE).write_text(json.dumps(provenance, indent=2) + "\n",
                                           encoding="utf-8")
        umask = os.umask(0)
        os.umask(umask)
        for item in tmp.iterdir():  # save_pretrained writes model.safetensors as 0600
            os.chmod(item, 0o666 & ~umask)
    print(f"cached {gguf_path} -> {out_dir}: tokenizer {t_tok - start:.1f} s, "
          f"model {t_model - t_tok:.1f} s, total {time.perf_counter() - start:.1f} s",
          file=log, flush=True)
    return out_dir


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------

#: The weight precisions :func:`load_lm` accepts (config ``pretrained.dtype``; docs/study.md).
DTYPES = ("float32", "bfloat16", "float16")


def load_lm(folder: str | os.PathLike, device=None, dtype: str = "float32"):
    """Load ``(model, tokenizer)`` from a transformers folder (or a cached hub id) in ``dtype``
    (one of :data:`DTYPES`; default float32), in eval mode, on ``device`` (default: CUDA if
    available, else CPU). A sealed folder (a trained Transformer) whose files changed since it
    was written raises ``CorruptFileError`` (``fairppl.core.integrity``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    verify(folder)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=getattr(torch, dtype))
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
