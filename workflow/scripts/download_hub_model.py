"""Download a hub model of the model sheet (source `hf`) into its folder under resources/models,
where Snakemake runs: compute jobs then load that folder with local files only."""

from fairppl.lm.pretrained import download_hub_model


def main(snakemake):
    with open(snakemake.log[0], "w") as log:
        download_hub_model(snakemake.params.hub_id, snakemake.output.hub, log=log)


if "snakemake" in globals():
    main(snakemake)
