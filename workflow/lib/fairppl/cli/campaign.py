"""``fairppl campaign``: the Shannon game as a campaign (:mod:`fairppl.shannon.campaign`).

    fairppl campaign truncations --corpus C --language L [--split test] \\
        [--protocol exhaustive|randomized] [--n N] [--seed S] [--vocab-size V] --out DIR
    fairppl campaign score DIR BETS [--json] [--allow-invalid]
    fairppl campaign bets --model MODEL DIR [--l L] --out BETS
    fairppl campaign models DIR [--bettors kenlm-word,bigram,transformer,pretrained]
    fairppl campaign play DIR [--player NAME] [--port N] [--protocol list|money|rank|all]

``truncations`` and ``models`` read the study under ``--root`` (default: the current folder);
``play`` too, for ``--reference``.

``truncations`` runs from a project root after the study and writes a campaign folder (the
truncations for the sites, the outcomes, the organiser's key, the settings); ``score`` checks a
site's file of bets or rankings line by line and scores it with the key, without any model;
``bets`` makes a bets file from a model of the study, so the round trip (truncations, bets,
score) reproduces that model's numbers; ``models`` does so for every bettor the study has. Exit
status: 0 when scored with nothing flagged (or with ``--allow-invalid``), 1 when a record is
flagged (with ``--allow-invalid``: when no valid record is left to score), 2 for an unusable
campaign folder or corpus (a message naming the file and line).

This module parses, calls and prints: the work is in :mod:`fairppl.shannon` (the study's bettors
found and built in :mod:`fairppl.shannon.study_bettors`). Each subcommand is a pair
(``add_<name>``, its function) in ``SUBCOMMANDS``: adding one is adding a pair.
"""

from __future__ import annotations

import json
import math


def _truncations(args) -> int:
    from ..shannon.campaign import build_campaign

    meta = build_campaign(args.root, args.corpus, args.language, args.out, split=args.split,
                          protocol=args.protocol, n=args.n, seed=args.seed,
                          vocab_size=args.vocab_size, unit=args.unit, config_path=args.config)
    verb = "wrote" if meta["status"] == "written" else "unchanged (same settings and files):"
    scheme = "" if meta["protocol"] == "exhaustive" else f", {meta['scheme']} scheme"
    print(f"{verb} {args.out}: {meta['n_truncations']} truncations of {meta['n_units']} units "
          f"({meta['protocol']}{scheme}, {meta['corpus']}/{meta['language']} {meta['split']}), "
          f"m = {meta['m']} outcomes, unit {meta['unit']} ({meta['unit_reason']})")
    return 0


def add_truncations(csub) -> None:
    from ..shannon.campaign import PROTOCOLS

    p = csub.add_parser("truncations", help="write a campaign folder: truncations, outcomes, "
                                            "key")
    p.add_argument("--corpus", required=True, help="corpus id (results/corpus/<C>/units.parquet)")
    p.add_argument("--language", required=True, help="language id")
    p.add_argument("--split", default="test",
                   help="split whose units are truncated (default test; all: every unit)")
    p.add_argument("--protocol", default="exhaustive", choices=PROTOCOLS,
                   help="every position of every unit, or one random position in each of N "
                        "distinct units (the paper's systematic scheme where N allows, else "
                        "length-weighted: both estimate the per-word perplexity)")
    p.add_argument("--n", type=int, default=None,
                   help="units: the first N (exhaustive) or N drawn (randomized); default all")
    p.add_argument("--seed", type=int, default=0, help="seed of the randomized draws (0)")
    p.add_argument("--vocab-size", type=int, default=None,
                   help="vocabulary words, or characters with --unit char (default: "
                        "shannon.vocab_size of the config)")
    p.add_argument("--unit", default=None, choices=("word", "char"),
                   help="a position per word (between spaces) or per character, spaces left "
                        "out (default: char for a language in "
                        "word_ngram.languages_without_spaces of the config, else word)")
    p.add_argument("--root", default=".",
                   help="the study's project root, whose results/corpus/ holds the units "
                        "(default .)")
    p.add_argument("--config", default="config/config.yaml",
                   help="the study's config, relative to --root (default config/config.yaml)")
    p.add_argument("--out", required=True, help="campaign folder (new or empty)")
    p.set_defaults(func=_truncations)


def _number(x) -> str:
    return "inf" if x is None or math.isinf(x) else f"{x:.6g}"


def summary(result: dict) -> str:
    """The readable summary of :func:`fairppl.shannon.campaign.score_submission`'s result."""
    scheme = "" if result["protocol"] == "exhaustive" else f", {result['scheme']} scheme"
    lines = [f"campaign: {result['campaign']} ({result['protocol']}{scheme}, m = {result['m']}, "
             f"{result['n_truncations']} truncations)",
             f"kind: {result['kind'] or 'unknown (no valid record)'}"]
    if result["n_scored"]:
        if result["kind"] == "bets":
            line = f"perplexity: {_number(result['perplexity'])}"
            interval = result.get("interval")
            if interval:
                line += f" [{interval['low']:.6g}, {interval['high']:.6g}]"
            lines.append(line)
            lines.append(f"interval: {result['interval_note']}")
            if result.get("perplexity_note"):
                lines.append(f"note: {result['perplexity_note']}")
            lines.append(f"floor bets: {result['n_floor']} (uniform {{}}: {result['n_uniform']});"
                         f" list lengths {result['list_length_min']} to "
                         f"{result['list_length_max']}")
        else:
            kind = ("estimates of the bounds" if result["rank_values_kind"] == "estimates"
                    else "values (not bounds)")
            lines.append(f"entropy {kind}: {_number(result['entropy_lower_bits'])} to "
                         f"{_number(result['entropy_upper_bits'])} bits per word (perplexity "
                         f"{_number(result['perplexity_lower'])} to "
                         f"{_number(result['perplexity_upper'])}) from "
                         f"{result['n_truncations_ranked']} truncations; every rank known up to "
                         f"l = {result['list_length']}")
            lines.append(f"rank bounds: {result['rank_bounds_note']}")
            if result.get("entropy_upper_bound_bits") is not None:
                lines.append(f"upper value from the sample, biased low: Miller-Madow "
                             f"{_number(result['entropy_upper_mm_bits'])} bits, 95% upper bound "
                             f"{_number(result['entropy_upper_bound_bits'])} bits")
            for tail, t in result["tails"].items():
                if t["entropy_lower_bits"] is None:
                    lines.append(f"  {tail} tail: {t['note']}")
                    continue
                lines.append(f"  {tail} tail: {t['entropy_lower_bits']:.6g} to "
                             f"{t['entropy_upper_bits']:.6g} bits per word"
                             f"{'' if t['valid'] else ' (not bounds)'}")
        if result.get("scheme_note"):
            lines.append(f"note: {result['scheme_note']}")
    lines.append(f"n_scored: {result['n_scored']}")
    lines.append(f"n_flagged: {result['n_flagged']}")
    if result["note"]:
        lines.append(f"note: {result['note']}")
    for flag in result["flagged"]:
        where = f"line {flag['line']}" if flag["line"] is not None else "no line"
        lines.append(f"{where} (id {flag['id'] if flag['id'] is not None else '?'}): "
                     f"{flag['reason']}")
    return "\n".join(lines)


def _finite(value):
    """JSON has no infinity: an infinite number is written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _score(args) -> int:
    from ..shannon.campaign import read_campaign, read_submission, score_submission

    campaign = read_campaign(args.dir)
    records, flags = read_submission(args.bets, campaign)
    result = score_submission(campaign, records, flags, allow_invalid=args.allow_invalid)
    result["bets_file"] = args.bets
    if args.json:
        print(json.dumps(_finite(result), ensure_ascii=False, allow_nan=False))
    else:
        print(summary(result))
    return 1 if (flags and not args.allow_invalid) or not result["n_scored"] else 0


def add_score(csub) -> None:
    p = csub.add_parser("score", help="check and score a file of bets or rankings")
    p.add_argument("dir", help="campaign folder (fairppl campaign truncations --out)")
    p.add_argument("bets", help="the site's file: one JSON object per line, with bets or "
                                "ranking")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--allow-invalid", action="store_true",
                   help="score the valid records even when some are flagged (exit 0)")
    p.set_defaults(func=_score)


def _write_bets(campaign, out: str, length: int | None, model: str, root: str = ".",
                alpha: float | None = None, bos: str | None = None,
                eos: str | None = None) -> str:
    """Bet on every truncation of ``campaign`` with ``model``
    (:func:`fairppl.shannon.study_bettors.build_bettor`), write the bets to ``out`` and print
    it; the bettor's description (the bigram's discount)."""
    from tqdm import tqdm

    from ..shannon.bettors import campaign_bets
    from ..shannon.study_bettors import build_bettor, campaign_contexts
    from ..shannon.submission import write_bets

    bettor, what = build_bettor(campaign, model, root=root, alpha=alpha, bos=bos, eos=eos)
    contexts = campaign_contexts(campaign)
    records = campaign_bets(bettor, tqdm(contexts, desc="bets", unit="truncation",
                                         disable=len(contexts) < 50), campaign.outcomes, length)
    n = write_bets(out, records)
    print(f"wrote {out}: {n} bets records ({what}; lists of "
          f"{'all' if length is None else length} of m = {campaign.m} outcomes)")
    return what


def _bets(args) -> int:
    from ..core.errors import InputError
    from ..shannon.campaign_folder import read_campaign

    campaign = read_campaign(args.dir)
    length = None if args.l == "all" else (int(args.l) if args.l.isdigit() else -1)
    if length is not None and length < 0:
        raise InputError(f"--l {args.l!r}: expected a list length >= 0 or all")
    _write_bets(campaign, args.out, length, args.model, alpha=args.alpha, bos=args.bos,
                eos=args.eos)
    return 0


def add_bets(csub) -> None:
    p = csub.add_parser("bets", help="bet on a campaign's truncations with a model of the study")
    p.add_argument("--model", required=True,
                   help="a KenLM word n-gram (results/ngram/<C>/<L>/word-v<V>.o<N>.kenlm, its "
                        "vocabulary = the campaign's), a transformers folder (a study "
                        "Transformer's results/neural/.../model or a pretrained LM's hf "
                        "folder), or bigram-eq7 (trained here on the campaign's corpus)")
    p.add_argument("dir", help="campaign folder (fairppl campaign truncations --out)")
    p.add_argument("--l", default="all",
                   help="list length: the l best bets per truncation (all: every outcome)")
    p.add_argument("--alpha", type=float, default=None,
                   help="bigram-eq7: the discount (default: chosen on the dev split)")
    p.add_argument("--bos", default=None, help="transformers: start token (model sheet's bos)")
    p.add_argument("--eos", default=None, help="transformers: end token (model sheet's eos)")
    p.add_argument("--out", required=True, help="the bets file to write (JSON lines)")
    p.set_defaults(func=_bets)


def _models(args) -> int:
    import json
    from pathlib import Path

    from ..core.errors import InputError
    from ..core.io import write_text
    from ..shannon.campaign_folder import TRUNCATIONS, read_campaign
    from ..shannon.study_bettors import BETTOR_KINDS, BIGRAM, find_study_bettors
    from ..shannon.truncations import load_config

    campaign = read_campaign(args.dir)
    config_path = Path(args.root) / args.config
    config = load_config(config_path) or {}
    kinds = args.bettors.split(",") if args.bettors is not None else \
        (config.get("shannon") or {}).get("bettors") or ["bigram"]
    unknown = [k for k in kinds if k not in BETTOR_KINDS]
    if unknown:
        raise InputError(f"--bettors {unknown}: expected a comma-separated list of "
                         f"{', '.join(BETTOR_KINDS)}")
    found, missing = find_study_bettors(campaign, args.root, config, kinds)
    if missing and not args.skip_missing:
        raise InputError("no model for: " + "; ".join(missing) + " (or --skip-missing)",
                         path=str(campaign.folder))
    folder = campaign.folder / "models"
    made = 0
    for bettor in found:
        out = folder / f"{bettor.name}.jsonl"
        if out.exists() and out.stat().st_mtime >= (campaign.folder / TRUNCATIONS).stat().st_mtime:
            print(f"{out}: up to date")
            continue
        try:  # root: where the bigram finds the study's units
            what = _write_bets(campaign, str(out), None, bettor.model, root=args.root,
                               bos=bettor.bos, eos=bettor.eos)
        except InputError as err:  # e.g. a context beyond a Transformer's window
            missing.append(f"{bettor.name}: {err}")
            continue
        label = bettor.label
        if bettor.model == BIGRAM:  # its discount, chosen on the dev split
            label += f" ({what})"
        write_text(out.with_suffix(".json"), json.dumps({"label": label, "model":
                                                          bettor.model}) + "\n")
        made += 1
    for why in missing:
        print(f"skipped {why}")
    print(f"{made} bets file(s) written to {folder}; the page's results view and campaign "
          f"score read them")
    # a bettor that could not be built fails the command unless skipping was asked for
    return 1 if missing and not args.skip_missing else 0


def add_models(csub) -> None:
    from ..shannon.study_bettors import BETTOR_KINDS

    p = csub.add_parser("models", help="bet on a campaign with every bettor of the study "
                                       "(DIR/models/), to stand beside the players")
    p.add_argument("dir", help="campaign folder (fairppl campaign truncations --out)")
    p.add_argument("--bettors", default=None,
                   help="comma-separated kinds among " + ", ".join(BETTOR_KINDS) +
                        " (default: shannon.bettors of the config)")
    p.add_argument("--root", default=".", help="the study's project root (default .)")
    p.add_argument("--config", default="config/config.yaml",
                   help="the study's config, relative to --root")
    p.add_argument("--skip-missing", action="store_true",
                   help="go on when a requested kind has no model yet (say which)")
    p.set_defaults(func=_models)


def _play(args) -> int:
    from ..core.errors import InputError
    from ..shannon.play import PlayError

    try:
        return _serve_play(args)
    except PlayError as err:  # a refused --player: one line, as every input error
        raise InputError(f"--player: {err}") from None


def _serve_play(args) -> int:
    from ..shannon.campaign import read_campaign
    from ..shannon.play import PLAY_PROTOCOLS, PlaySettings, check_player
    from ..shannon.play_server import PlayServer, page_url, reference_texts, serve

    if args.player is not None:
        check_player(args.player)  # before anything is read
    campaign = read_campaign(args.dir)
    protocols = PLAY_PROTOCOLS if args.protocol == "all" else (args.protocol,)
    settings = {p: PlaySettings(p, list_max=args.list_max, stake=args.stake, coins=args.coins,
                                max_guesses=args.max_guesses) for p in protocols}
    references = reference_texts(campaign, args.root, args.reference) if args.reference else None
    state = PlayServer(campaign, settings, player=args.player,
                       kind="scripted" if args.scripted else "person", references=references,
                       reference_language=args.reference)
    httpd = serve(state, args.host, args.port)  # repairs cut lines once the port is had
    for notice in state.notices:
        print(f"repaired {notice['message']}", flush=True)
    who = f"player {state.player}" if args.player else "players name themselves on the page"
    print(f"serving the Shannon game on {campaign.settings['corpus']}/"
          f"{campaign.settings['language']} ({len(campaign.ids)} truncations, "
          f"{', '.join(protocols)}; {who}) at {page_url(httpd, state)} ; open this address "
          f"(the token in it lets only this page bet); Ctrl+C stops it", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        print("stopped; every bet made is in the players' files", flush=True)
    finally:
        httpd.server_close()
    return 0


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535 (0: any free port)."""
    import argparse

    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a port number from 1 to 65535 "
                                         f"(0: any free port)")
    return port


def add_play(csub) -> None:
    from ..shannon.play import PLAY_PROTOCOLS

    p = csub.add_parser("play", help="serve a page on which a person plays the campaign")
    p.add_argument("dir", help="campaign folder (fairppl campaign truncations --out)")
    p.add_argument("--player", default=None,
                   help="the one player this server takes (default: each names themselves on "
                        "the page); bets go to DIR/players/<player>/<protocol>.jsonl")
    p.add_argument("--protocol", default="all", choices=(*PLAY_PROTOCOLS, "all"),
                   help="list: up to --list-max ranked guesses sharing --stake by 1/rank; "
                        "money: --coins coins over a few guesses; rank: guess until right "
                        "(at most --max-guesses); all: the player picks (default)")
    p.add_argument("--list-max", type=int, default=5, help="list: guesses per bet (5)")
    p.add_argument("--stake", type=float, default=0.9,
                   help="list: the share of the money on the listed guesses (0.9)")
    p.add_argument("--coins", type=int, default=100, help="money: coins per bet (100)")
    p.add_argument("--max-guesses", type=int, default=10,
                   help="rank: guesses before the answer is shown (10)")
    p.add_argument("--reference", default=None, metavar="LANG",
                   help="also show the same unit in this language (e.g. eng), from the study's "
                        "results/corpus/<corpus>/units.parquet under --root")
    p.add_argument("--root", default=".", help="the study's project root (for --reference)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port_number, default=8000,
                   help="port (default 8000; 0: any free)")
    p.add_argument("--scripted", action="store_true",
                   help="the player is a script, not a person: recorded and shown as such")
    p.set_defaults(func=_play)


#: The campaign subcommands: functions that add one to the campaign's subparsers.
SUBCOMMANDS = [add_truncations, add_score, add_bets, add_models, add_play]


def add_parser(sub) -> None:
    """Register ``campaign`` and its subcommands on an argparse subparsers object."""
    p = sub.add_parser("campaign", help="the Shannon game as a campaign: truncations, scoring")
    csub = p.add_subparsers(dest="campaign_command", required=True)
    for add in SUBCOMMANDS:
        add(csub)
