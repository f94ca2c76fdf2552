"""People beside the models in the report (config ``shannon.players``): each entry names a
campaign folder, a player and a protocol of ``fairppl campaign play``; its rows are the player's
score on the truncations they played and every model's of the campaign's ``models/`` folder on
exactly those (:func:`fairppl.shannon.play_server.compare`). The table is
``results/tables/shannon_players.csv``; the report's Shannon section prints it with sentences
computed from it (:func:`players_sentences`)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from ..core.errors import InputError
from .play import PLAY_PROTOCOLS, check_player_files, player_name_problem

#: Columns of shannon_players.csv, with units in the names.
COLUMNS = ("corpus", "language", "unit", "campaign", "player", "player_kind", "protocol",
           "predictor", "predictor_kind", "n_truncations_played", "n_truncations",
           "n_units_played", "perplexity_per_unit", "ci_low", "ci_high",
           "entropy_low_bits_per_unit", "entropy_high_bits_per_unit",
           "entropy_high_mm_bits_per_unit", "entropy_high_bound_bits_per_unit",
           "rank_values_are_bounds", "rank_values_kind", "lower_above_perplexity",
           "perplexity_above_upper", "note")


def bets_file(entry: dict) -> Path:
    return Path(entry["campaign"]) / "players" / entry["player"] / f"{entry['protocol']}.jsonl"


def check_players(entries, where: str) -> list[dict]:
    """Refuse at start-up an entry that is not ``{campaign, player, protocol}``, whose player
    has no bets file yet (naming the config and entry), or whose player's files the server of
    ``fairppl campaign play`` would refuse (:func:`fairppl.shannon.play.check_player_files`:
    naming the file and line). A last line cut short (a server killed while writing it) is
    refused too, with what repairs it: the report does not change a player's files, and
    ``fairppl campaign play`` moves the cut bytes aside when it starts."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise InputError(f"shannon.players is {entries!r}: expected a list of "
                         f"{{campaign, player, protocol}}", path=where)
    out = []
    for k, entry in enumerate(entries, start=1):
        what = f"shannon.players entry {k}"
        if not isinstance(entry, dict) or set(entry) != {"campaign", "player", "protocol"}:
            raise InputError(f"{what} is {entry!r}: expected exactly the keys campaign, player, "
                             f"protocol", path=where)
        if entry["protocol"] not in PLAY_PROTOCOLS:
            raise InputError(f"{what}: protocol {entry['protocol']!r}, expected one of "
                             f"{', '.join(PLAY_PROTOCOLS)}", path=where)
        problem = player_name_problem(entry["player"])
        if problem:
            raise InputError(f"{what}: player {entry['player']!r} is not a player's name "
                             f"({problem}); expected letters, digits, _ . -", path=where)
        if not bets_file(entry).is_file():
            raise InputError(f"{what}: no bets file {bets_file(entry)} (has "
                             f"{entry['player']} played the {entry['protocol']} protocol of "
                             f"fairppl campaign play on {entry['campaign']}?); expected a "
                             f"player's bets file", path=where)
        check_played(entry)
        out.append(entry)
    return out


#: The stamps (path, mtime, size) of the files checked already: Snakemake asks for the players
#: several times while it parses the workflow, and a campaign can hold 100,000 truncations.
_CHECKED: set[tuple] = set()


def _stamp(entry: dict) -> tuple:
    from .campaign_folder import CAMPAIGN_FILES

    folder = Path(entry["campaign"])
    mine = bets_file(entry)
    paths = [folder / name for name in CAMPAIGN_FILES] + [
        mine, mine.with_suffix(".settings.json"), mine.with_suffix(".journal.jsonl"),
        mine.with_suffix(".pending.json")]
    out = []
    for path in paths:
        try:
            stat = path.stat()
            out.append((str(path), stat.st_mtime_ns, stat.st_size))
        except OSError:
            out.append((str(path), None, None))
    return tuple(out)


def check_played(entry: dict) -> None:
    """The player's files of ``entry`` as the play server checks them at start-up; a cut last
    line is refused, naming what repairs it."""
    from .campaign_folder import read_campaign

    stamp = _stamp(entry)
    if stamp in _CHECKED:
        return
    campaign = read_campaign(entry["campaign"])
    for cut in check_player_files(campaign, entry["player"], entry["protocol"]):
        raise InputError(f"the last line is cut short ({len(cut.tail)} bytes: the server was "
                         f"killed while writing it); expected whole lines: start fairppl "
                         f"campaign play {entry['campaign']} --player {entry['player']} "
                         f"--protocol {entry['protocol']} once, which keeps the whole lines "
                         f"and moves the cut bytes aside, then run the study again",
                         path=str(cut.path), line=cut.n_lines + 1)
    _CHECKED.add(stamp)


def _player_kind(entry: dict) -> str:
    path = bets_file(entry).with_suffix(".settings.json")
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("player_kind", "person")
    except (OSError, ValueError):
        return "person"


def _row(base: dict, predictor: str, kind: str, score: dict, ranks: dict | None = None) -> dict:
    interval = score.get("interval") or {}
    values = ranks if ranks is not None else score
    bounds = values.get("rank_bounds_valid")
    return base | {
        "predictor": predictor, "predictor_kind": kind,
        "n_units_played": score.get("n_units_scored"),
        "perplexity_per_unit": score.get("perplexity"),
        "ci_low": interval.get("low"), "ci_high": interval.get("high"),
        "entropy_low_bits_per_unit": values.get("entropy_lower_bits"),
        "entropy_high_bits_per_unit": values.get("entropy_upper_bits"),
        "entropy_high_mm_bits_per_unit": values.get("entropy_upper_mm_bits"),
        "entropy_high_bound_bits_per_unit": values.get("entropy_upper_bound_bits"),
        "rank_values_are_bounds": bounds,
        "rank_values_kind": values.get("rank_values_kind"),
        "lower_above_perplexity": values.get("lower_above_perplexity"),
        "perplexity_above_upper": values.get("perplexity_above_upper"),
        "note": score.get("error") or (values.get("rank_bounds_note") if ranks is not None
                                       or score.get("kind") == "ranking"
                                       else score.get("interval_note")),
    }


def player_rows(entry: dict) -> list[dict]:
    from .campaign_folder import read_campaign
    from .play_server import compare

    campaign = read_campaign(entry["campaign"])
    result = compare(campaign, bets_file(entry), entry["protocol"])
    meta = campaign.settings
    kind = _player_kind(entry)
    base = {"corpus": meta.get("corpus"), "language": meta.get("language"),
            "unit": campaign.unit, "campaign": str(entry["campaign"]),
            "player": entry["player"], "player_kind": kind, "protocol": entry["protocol"],
            "n_truncations_played": result["n_played"],
            "n_truncations": result["n_truncations"]}
    if not result["n_played"]:
        return [_row(base, entry["player"], kind, {"error": "nothing played yet"})]
    rows = [_row(base, entry["player"], kind, result["player_score"])]
    for model in result["models"]:
        rows.append(_row(base, model["label"], "model", model, model.get("ranks")))
    return rows


def players_table(entries) -> pl.DataFrame:
    rows = [row for entry in entries for row in player_rows(entry)]
    schema = {c: pl.Utf8 for c in COLUMNS} | {
        c: pl.Float64 for c in ("perplexity_per_unit", "ci_low", "ci_high",
                                "entropy_low_bits_per_unit", "entropy_high_bits_per_unit",
                                "entropy_high_mm_bits_per_unit",
                                "entropy_high_bound_bits_per_unit")} | {
        c: pl.Int64 for c in ("n_truncations_played", "n_truncations", "n_units_played")} | {
        c: pl.Boolean for c in ("rank_values_are_bounds", "lower_above_perplexity",
                                "perplexity_above_upper")}
    return pl.DataFrame(rows, schema=schema).select(COLUMNS)


def _who(row: dict) -> str:
    return (f"{row['player']} (a scripted player, not a person)"
            if row["player_kind"] == "scripted" else f"{row['player']} (a person)")


def players_sentences(table: pl.DataFrame, names: dict[str, str]) -> list[str]:
    """One sentence per player and protocol, from the table alone."""
    out = []
    keys = table.select("campaign", "player", "protocol").unique(maintain_order=True)
    for key in keys.iter_rows(named=True):
        part = table.filter((pl.col("campaign") == key["campaign"])
                            & (pl.col("player") == key["player"])
                            & (pl.col("protocol") == key["protocol"]))
        rows = part.to_dicts()
        me = next(r for r in rows if r["predictor_kind"] != "model")
        models = [r for r in rows if r["predictor_kind"] == "model"]
        lang = names.get(me["language"], me["language"])
        unit = "characters" if me["unit"] == "char" else "words"
        head = (f"{_who(me)} played {me['n_truncations_played']} of {me['n_truncations']} "
                f"truncations of {lang} ({me['protocol']} protocol; the unit is {unit})")
        if not me["n_truncations_played"]:
            out.append(head + ": nothing played yet.")
            continue
        if me["protocol"] == "rank":
            kind = ("estimates of the bounds" if me["rank_values_kind"] == "estimates"
                    else f"values, not bounds ({me['rank_values_kind']})")
            text = (f"{head}: Shannon's rank {kind}, {me['entropy_low_bits_per_unit']:.2f} "
                    f"to {me['entropy_high_bits_per_unit']:.2f} bits per {unit[:-1]}")
            if me["entropy_high_bound_bits_per_unit"] is not None:
                text += (f" (the upper one, from {me['n_truncations_played']} truncations, is "
                         f"biased low: Miller-Madow "
                         f"{me['entropy_high_mm_bits_per_unit']:.2f}, 95% upper bound "
                         f"{me['entropy_high_bound_bits_per_unit']:.2f})")
            out.append(text + ".")
            continue
        ci = (f" (95% interval {me['ci_low']:.1f} to {me['ci_high']:.1f})"
              if me["ci_low"] is not None else f" ({me['note']})")
        text = f"{head}: gambling perplexity {me['perplexity_per_unit']:.1f}{ci}"
        scored = sorted((r for r in models if r["perplexity_per_unit"] is not None),
                        key=lambda r: r["perplexity_per_unit"])
        if len(scored) == 1:
            text += (f"; on the same truncations {scored[0]['predictor']} scored "
                     f"{scored[0]['perplexity_per_unit']:.1f}")
        elif scored:
            text += (f"; on the same truncations the {len(scored)} models scored from "
                     f"{scored[0]['perplexity_per_unit']:.1f} ({scored[0]['predictor']}) to "
                     f"{scored[-1]['perplexity_per_unit']:.1f} ({scored[-1]['predictor']})")
        out.append(text + ".")
    return out
