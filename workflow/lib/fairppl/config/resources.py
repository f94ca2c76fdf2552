"""What a job asks the cluster for: its `runtime` (minutes) by attempt and by the number of units
it works on, and whether the GPU rules ask for a GPU (config `resources`, docs/cluster.md).

A rule declares the minutes measured for the default study, with a margin, at a number of units
(``reference_units``); a config asking for more units scales them up in proportion (never down:
the margin covers start-up), ``null`` units (the whole split) as :data:`WHOLE_SPLIT_UNITS`. Each
retry multiplies by ``runtime_growth`` (a job that ended TIMEOUT comes back with more time), and
no job asks for more than ``max_runtime`` (the site's longest job; a request above it would be
refused or pend for ever).
"""

from __future__ import annotations

import math

#: Units taken for a `max_units: null` (the whole evaluation split): above the largest shipped
#: split (the Bible's test split of the default study, under 5,000 verses per language).
WHOLE_SPLIT_UNITS = 5000

#: The schema's defaults of config `resources` that these functions read
#: (tests/unit/test_settings.py checks them against workflow/schemas/config.schema.yaml).
DEFAULTS = {"runtime_growth": 2, "max_runtime": 1440, "gpu": 1}


def _setting(block: dict, key: str):
    value = block.get(key, DEFAULTS[key])
    return DEFAULTS[key] if value is None else value


def units_factor(units: int | None, reference_units: int | None) -> float:
    """How many times the measured minutes a job on ``units`` units needs (at least 1)."""
    if reference_units is None:
        return 1.0
    wanted = WHOLE_SPLIT_UNITS if units is None else units
    return max(1.0, wanted / reference_units)


def job_runtime(block: dict, minutes: float, attempt: int, units: int | None = None,
                reference_units: int | None = None) -> int:
    """Minutes attempt ``attempt`` (1, 2, ...) of a job asks for: ``minutes`` scaled by the
    units, times ``runtime_growth`` ** (attempt - 1), at most ``max_runtime`` (config
    `resources` block ``block``)."""
    growth = _setting(block, "runtime_growth")
    cap = max_runtime(block)
    wanted = minutes * units_factor(units, reference_units) * growth ** (attempt - 1)
    return int(min(cap, math.ceil(wanted)))


def max_runtime(block: dict) -> int:
    """Minutes: the most any job, a group job included, may ask for (config `resources`)."""
    return int(_setting(block, "max_runtime"))


def gpus_per_job(block: dict) -> int:
    """GPUs each GPU rule's job asks for: config `resources.gpu` (0 on a site without GPUs, set
    by the site profile's `config:` key)."""
    return int(_setting(block, "gpu"))


def connected_pieces(jobs, dependencies) -> int:
    """How many connected pieces ``jobs`` form, linked by ``dependencies(job)`` (the jobs it
    needs) within them: what a group's `group-components` counts."""
    members = set(jobs)
    parent = {job: job for job in members}

    def root(job):
        while parent[job] is not job:
            parent[job] = parent[parent[job]]
            job = parent[job]
        return job

    for job in members:
        for needed in dependencies(job):
            if needed in members:
                parent[root(needed)] = root(job)
    return len({root(job) for job in members})


def oversized_groups(groups: list[tuple[str, str, int, int | None, int]],
                     max_runtime: int) -> list[str]:
    """What to say about the group jobs that would ask for more than ``max_runtime`` minutes:
    ``groups`` holds, per group job, its id, the group name its `group-components` is set under,
    its number of jobs, its runtime (Snakemake's sum over the layers it runs one after another)
    and its number of connected pieces. One sentence per oversized group, with the
    `group-components` value that fits."""
    lines = []
    for groupid, name, jobs, runtime, pieces in groups:
        if runtime is None or runtime <= max_runtime:
            continue
        line = (f"group job {groupid!r} ({jobs} jobs in {pieces} pieces) would ask for "
                f"{runtime} minutes, more than resources.max_runtime ({max_runtime})")
        if pieces > 1:
            fit = max(1, pieces * max_runtime // runtime)
            line += (f": give its group fewer pieces, e.g. `--group-components '{name}={fit}'` "
                     f"on the command line, or make group jobs wider (a larger `cores` in your "
                     f"site profile)")
        else:
            line += (": one piece of the workflow already takes that long in one group; raise "
                     "resources.max_runtime if your site allows, or a larger `cores`")
        lines.append(line)
    return lines


def rule_list(rules, shown: int = 4) -> str:
    """``rules`` sorted and joined with commas, the ones past the first ``shown`` counted ("a, b,
    c, d and 3 more")."""
    rules = sorted(rules)
    if len(rules) <= shown + 1:
        return ", ".join(rules)
    return f"{', '.join(rules[:shown])} and {len(rules) - shown} more"


def unknown_partitions(wanted: dict[str, set[str]], known: set[str],
                       places: dict[str, set[str]] | None = None) -> list[str]:
    """One sentence per partition the jobs ask for (``wanted``: partition -> its rules; ``places``:
    partition -> where it was set, e.g. "default-resources") that the cluster does not have
    (``known``, from `sinfo`): sbatch would refuse each such job, on two lines of its own, after
    the run started."""
    lines = []
    for partition, rules in sorted(wanted.items()):
        if partition in known:
            continue
        where = ", ".join(sorted((places or {}).get(partition) or []))
        lines.append(f"slurm_partition {partition!r} ({f'set in {where}; ' if where else ''}"
                     f"rules {rule_list(rules)}) is not a partition of this cluster; "
                     f"expected one of {', '.join(sorted(known))} (`sinfo`), set in your site "
                     f"profile's default-resources or set-resources")
    return lines
