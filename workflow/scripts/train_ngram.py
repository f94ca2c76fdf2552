"""Train one KenLM n-gram over a token stream of a language's train split and write its record.

Streams (the ``stream`` wildcard): ``char`` (characters, open vocabulary), ``word-v{size|all}``
(words, closed vocabulary, OOV words as the UNK class; ``all`` = train types seen twice or more)
and ``spm-{type}-{size}`` (SentencePiece pieces, default tokenization). The training text and the
ARPA file stay in a private folder under the job's tmpdir, removed on success, failure or SIGTERM;
the outputs are the binary model and a JSON record of what it was trained on (for words, the
vocabulary that scoring needs)."""

import json
import logging

from fairppl.corpus.readers import read_split
from fairppl.core.io import write_text
from fairppl.ngram.kenlm_tool import private_workdir, train_model
from fairppl.ngram.training_text import write_stream


def main(snakemake):
    logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(message)s")
    wc = snakemake.wildcards
    texts = read_split(snakemake.input.units, wc.language, "train")["text"].to_list()
    with private_workdir(snakemake.resources.tmpdir) as work:
        text = work / "train.txt"
        fields = write_stream(wc.stream, texts, text, snakemake.input.get("tokenizer"),
                              where=f"{wc.corpus}/{wc.language}")
        logging.info("stream %s: %d train units, %d tokens", wc.stream, len(texts), fields["n_tokens"])
        with open(snakemake.log[0], "a") as log:
            train_model(text, snakemake.output.model, order=int(wc.order),
                        lmplz=snakemake.input.lmplz, build_binary=snakemake.input.build_binary,
                        tmpdir=work, memory=f"{snakemake.resources.mem_mb // 2}M",
                        discount_fallback=snakemake.params.discount_fallback, log=log)
    record = {"stream": wc.stream, "order": int(wc.order), "n_train_units": len(texts), **fields}
    write_text(snakemake.output.record, json.dumps(record, ensure_ascii=False))


if "snakemake" in globals():
    main(snakemake)
