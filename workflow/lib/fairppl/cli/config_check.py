"""``fairppl config check FILE [FILE...]``: config files checked as one run would read them.

Snakemake parses every ``--configfile`` overlay before the workflow starts, and for a YAML error
it stops with ``Config file is not valid JSON or YAML.``, naming neither the file nor the line.
This command reads each file with the workflow's own YAML check
(:func:`fairppl.config.settings.check_yaml_syntax`: the file, the line and the column, and a key
given twice), then merges them with Snakemake's own ``snakemake.utils.update_config`` (the
Snakefile's ``config/config.yaml`` first, each overlay over the ones before it: a mapping merged
key by key, any other value replaced) and checks the result as the workflow does at start-up
(:func:`fairppl.config.settings.check_config`: the schema, the corpus blocks, the orders, the
split). The checks that need the sheets and the planned run are the dry run's.

Prints ``error: <file>, line <n>: ...`` (one line) and exits 2 on the first problem, or one line
saying what it checked and exits 0.
"""

from __future__ import annotations

from pathlib import Path

#: The repository holding this library (workflow/lib/fairppl/cli/config_check.py).
REPOSITORY = Path(__file__).resolve().parents[4]
#: The config file of the Snakefile's ``configfile:`` directive, relative to the working
#: directory: Snakemake reads it first and merges the ``--configfile`` overlays into it.
BASE = "config/config.yaml"


def _files(given: list[str], alone: bool) -> list[str]:
    """The files in the order Snakemake reads them: the Snakefile's ``config/config.yaml`` (where
    the working directory has it and ``--alone`` is not given) first, then ``given``, each once."""
    files = [] if alone or not Path(BASE).is_file() else [BASE]
    for name in given:
        if not any(Path(name).resolve() == Path(f).resolve() for f in files):
            files.append(name)
    return files


def _check(args) -> int:
    import yaml
    from snakemake.utils import update_config

    from ..config.settings import check_config, check_yaml_syntax, config_source
    from ..core.errors import InputError

    files = _files(args.files, args.alone)
    schema = REPOSITORY / "workflow" / "schemas" / "config.schema.yaml"
    config: dict = {}
    for name in files:
        if not Path(name).is_file():
            raise InputError("no such file; expected a config file (YAML)", path=name)
        check_yaml_syntax(name)
        update_config(config, yaml.safe_load(Path(name).read_text(encoding="utf-8")) or {})
    check_config(config, str(schema), config_source(files))
    print(f"{', '.join(files)}: the YAML of each file and the merged config (schema, corpus "
          f"blocks, orders, split) pass; the sheets are checked by the dry run")
    return 0


def add_parser(sub) -> None:
    """Register the ``config`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("config", help="check config files as a run would read them")
    actions = p.add_subparsers(dest="action", required=True)
    check = actions.add_parser(
        "check", help="the YAML of each file, then the files merged as Snakemake merges them "
                      "(exit 2 on a problem)")
    check.add_argument("files", nargs="+", metavar="FILE",
                       help="config files in the order of --configfile (later ones override)")
    check.add_argument("--alone", action="store_true",
                       help=f"do not read {BASE} of the working directory first (as the "
                            f"Snakefile's configfile: directive does)")
    check.set_defaults(func=_check)
