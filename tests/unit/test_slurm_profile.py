"""The shipped SLURM profile without a cluster: a rule in its `groups` is never a local rule,
and a quick rule (tables or figures only, no resources of its own) is local. The cluster itself:
tests/cluster/test_slurm.py."""

from __future__ import annotations

import re

import yaml

from conftest import ROOT


def _declared_local_rules() -> set[str]:
    """Rules the workflow marks `localrule: True`, plus `all` (Snakemake runs a target rule
    without a body locally)."""
    return {"all"} | {rule for rule, body in _rule_blocks().items()
                      if any(line.strip() == "localrule: True" for line in body)}


def _rule_blocks() -> dict[str, list[str]]:
    """Each rule of workflow/rules by name: the lines of its body."""
    blocks, rule = {}, None
    for path in (ROOT / "workflow" / "rules").glob("*.smk"):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^(?:local)?rule (\w+):", line)
            if m:
                rule = m.group(1)
                blocks[rule] = []
            elif rule and (line.startswith(" ") or not line.strip()):
                blocks[rule].append(line)
            else:
                rule = None
    return blocks


def test_the_profile_queues_only_jobs_worth_a_slurm_job():
    """A rule in the profile's `groups` is never a local rule (Snakemake would submit it with its
    group anyway), and a rule that only writes tables or figures and declares no resources of
    its own (a quick one) is local: it never waits in the queue for a job of its own."""
    profile = yaml.safe_load((ROOT / "workflow" / "profiles" / "slurm" / "profile.yaml")
                             .read_text(encoding="utf-8"))
    local = _declared_local_rules()
    assert not set(profile["groups"]) & local, set(profile["groups"]) & local
    quick = []
    for rule, body in _rule_blocks().items():
        text = "\n".join(body)
        outputs = re.search(r"^    output:\n((?:        .*\n?)+)", text + "\n", flags=re.M)
        paths = re.findall(r'"(results/[^"]+)"', outputs.group(1)) if outputs else []
        if paths and all(p.startswith(("results/tables/", "results/figures/")) for p in paths) \
                and "    resources:" not in text:
            quick.append(rule)
    assert quick and not set(quick) - local, f"quick rules that would queue: {set(quick) - local}"
