"""The study's configuration: the config file's syntax, schema and cross-references
(:mod:`.settings`), the newer stages' settings against each other and the sheets, with the notes on
stages that valid settings leave empty (:mod:`.stages`), the language and model sheets
(:mod:`.sheet`), which corpus trains the models scored on which (:mod:`.design`), what a job asks
a cluster for (:mod:`.resources`), the values of `--config` and a profile's `config:` block typed
as the schema says (:mod:`.overrides`), a site profile checked before Snakemake reads it
(:mod:`.profile`), and the checks of a planned run on SLURM (:mod:`.cluster`).

May import: :mod:`fairppl.core`.
"""
