"""Train one KenLM n-gram over a token stream of a language's train split and write its record.

Streams (the ``stream`` wildcard): ``char`` (characters, open vocabulary), ``word-v{size|all}``
(words, closed vocabulary, OOV words as the UNK class) and ``spm-{type}-{size}`` (SentencePiece
pieces, default tokenization). The training text and the ARPA file stay in the rule's tmpdir;
the outputs are the binary model and a JSON record of what it was trained on (for words, the
vocabulary that scoring needs)."""

import json
import logging
import os
import tempfile

from fairppl.charlm import build_kenlm, write_training_text
from fairppl.corpora import read_split
from fairppl.io import write_lines, write_text
from fairppl.subwordlm import load_sentencepiece, pieces
from fairppl.wordlm import build_vocabulary, write_unk_text


def write_stream(stream: str, texts: list[str], path: str, tokenizer: str | None) -> dict:
    """Write the training text of ``stream`` to ``path``; return the record's stream fields."""
    if stream == "char":
        write_training_text(texts, path)
        return {"n_tokens": sum(len(t) for t in texts)}
    if stream.startswith("word-v"):
        requested = stream.removeprefix("word-v")
        size = None if requested == "all" else int(requested)
        vocab = build_vocabulary(texts, size)
        write_unk_text(texts, vocab, path)
        return {"n_tokens": sum(len(t.split(" ")) for t in texts if t),
                "requested": size, "actual": vocab.actual, "n_train_types": vocab.n_train_types,
                "words": list(vocab.words)}
    if stream.startswith("spm-"):
        sp = load_sentencepiece(tokenizer)
        lines = [" ".join(pieces(sp, text)) for text in texts]
        write_lines(path, lines)
        return {"n_tokens": sum(len(line.split()) for line in lines)}
    raise ValueError(f"unknown n-gram stream {stream!r}")


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    texts = read_split(snakemake.input.units, wc.language, "train")["text"].to_list()
    tmpdir = snakemake.resources.tmpdir
    with tempfile.TemporaryDirectory(prefix="ngram-text-", dir=tmpdir) as work:
        text = os.path.join(work, "train.txt")
        fields = write_stream(wc.stream, texts, text, snakemake.input.get("tokenizer"))
        logging.info("stream %s: %d train units, %d tokens", wc.stream, len(texts), fields["n_tokens"])
        with open(snakemake.log[0], "a") as log:
            build_kenlm(text, snakemake.output.model, order=int(wc.order),
                        lmplz=snakemake.input.lmplz, build_binary=snakemake.input.build_binary,
                        tmpdir=tmpdir, memory=f"{snakemake.resources.mem_mb // 2}M",
                        discount_fallback=snakemake.params.discount_fallback, log=log)
    record = {"stream": wc.stream, "order": int(wc.order), "n_train_units": len(texts), **fields}
    write_text(snakemake.output.record, json.dumps(record, ensure_ascii=False))


if "snakemake" in globals():
    main(snakemake)
