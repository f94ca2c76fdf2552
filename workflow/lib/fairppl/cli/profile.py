"""``fairppl profile check PATH``: a site profile checked before Snakemake reads it
(:mod:`fairppl.config.profile`; docs/cluster.md runs it before the dry run).

Prints one line per problem (file, line, key, what was expected) and exits 2, or says what it
checked and exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: The repository holding this library (workflow/lib/fairppl/cli/profile.py).
REPOSITORY = Path(__file__).resolve().parents[4]


def _workflow_root(given: str | None) -> Path:
    if given:
        return Path(given)
    here = Path.cwd()
    return here if (here / "Snakefile").is_file() and (here / "workflow").is_dir() else REPOSITORY


def _check(args) -> int:
    from ..config.profile import profile_file, profile_problems, workflow_rules

    root = _workflow_root(args.workflow)
    rules = workflow_rules(root)
    schema = root / "workflow" / "schemas" / "config.schema.yaml"
    problems = profile_problems(args.path, str(schema), rules)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 2
    print(f"{profile_file(args.path)}: every key is a Snakemake option, every rule under "
          f"set-resources and set-threads a rule of {root / 'Snakefile'}, and the config: block "
          f"fits the config schema")
    return 0


def add_parser(sub) -> None:
    """Register the ``profile`` subcommand on an argparse subparsers object."""
    p = sub.add_parser("profile", help="check a site profile before Snakemake reads it")
    actions = p.add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", help="keys, rule names and the config: block of a "
                                             "profile (exit 2 on a problem)")
    check.add_argument("path", help="the profile's folder (or its profile.yaml)")
    check.add_argument("--workflow", help="the workflow's folder whose rules and config schema "
                                          "apply (default: the working directory where it holds "
                                          "a Snakefile, else this repository)")
    check.set_defaults(func=_check)
