"""Train one n-gram (characters, words or pieces) with lmplz (modified Kneser-Ney)."""

import subprocess

from fairppl.charlm import lmplz_command


def main(snakemake):
    argv = lmplz_command(
        snakemake.input.lmplz,
        int(snakemake.wildcards.order),
        snakemake.input.text,
        snakemake.output.arpa,
        snakemake.resources.tmpdir,
        memory=f"{snakemake.resources.mem_mb}M",
        discount_fallback=snakemake.params.discount_fallback,
    )
    with open(snakemake.log[0], "w") as log:
        print("+", " ".join(argv), file=log, flush=True)
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=True)


if "snakemake" in globals():
    main(snakemake)
