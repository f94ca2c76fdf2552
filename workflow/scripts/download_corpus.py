"""Download one corpus archive (a url corpus's, or one Europarl pair's) and verify its sha256;
with FAIRPPL_MIRROR set, copy it from that local mirror instead (the same check)."""

from fairppl.corpus.readers import download_url


def main(snakemake):
    target = snakemake.params.target
    with open(snakemake.log[0], "w") as log:
        print(f"fetching {target['url']} (expected sha256 {target['sha256']})", file=log)
        source = download_url(target["url"], target["sha256"], snakemake.output.archive,
                              name=target.get("name"))
        print(f"read from {source}; checksum verified", file=log)


if "snakemake" in globals():
    main(snakemake)
