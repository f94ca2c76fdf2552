"""Download one URL corpus archive and verify its sha256."""

from fairppl.corpus.readers import download_url


def main(snakemake):
    spec = snakemake.params.spec
    with open(snakemake.log[0], "w") as log:
        print(f"downloading {spec['url']} (expected sha256 {spec['sha256']})", file=log)
        download_url(spec["url"], spec["sha256"], snakemake.output.archive)
        print("checksum verified", file=log)


if "snakemake" in globals():
    main(snakemake)
