"""The study's bettors on a campaign: which models a finished study has for the campaign's language
(:func:`find_study_bettors`), a bettor built from one of them (:func:`build_bettor`: a KenLM word
n-gram file, the eq. 7 bigram trained on the campaign's corpus, or a transformers folder) and the
truncations' contexts as the bettors read them (:func:`campaign_contexts`).

``fairppl campaign bets`` and ``fairppl campaign models`` parse their arguments, call these and
print what was written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..core.errors import InputError

#: The bettor kinds a study can have (the config's ``shannon.bettors``).
BETTOR_KINDS = ("kenlm-word", "bigram", "transformer", "pretrained")

#: The bigram's candidate discounts when no alpha is given (chosen on the dev split).
ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

#: The model name :func:`build_bettor` reads as the eq. 7 bigram.
BIGRAM = "bigram-eq7"


@dataclass(frozen=True)
class StudyBettor:
    """One bettor of the study: ``name`` (its bets file in the campaign's ``models/``), ``label``
    (for a reader), ``model`` (what :func:`build_bettor` takes: a path or ``bigram-eq7``) and,
    for a transformers LM, its start and end tokens (the model sheet's ``bos`` and ``eos``)."""

    name: str
    label: str
    model: str
    bos: str | None = None
    eos: str | None = None


def build_bettor(campaign, model: str, root: str | Path = ".", alpha: float | None = None,
                 bos: str | None = None, eos: str | None = None) -> tuple[object, str]:
    """The bettor of ``model`` on ``campaign`` and its description: a KenLM word n-gram file
    (with its ``.json`` record), :data:`BIGRAM` (the eq. 7 bigram trained on the train split of
    the campaign's vocabulary corpus under ``root``'s ``results/corpus/``, over characters in a
    campaign of unit ``char``; its discount ``alpha``, or the one of :data:`ALPHAS` best on the
    dev split) or a transformers folder (``bos``/``eos``: its special tokens). A char campaign
    takes the bigram only; anything else raises InputError naming ``model``."""
    outcomes = campaign.outcomes
    if model == BIGRAM:
        from ..corpus.readers import read_split
        from .bigram import check_alpha, train_bettor
        from .outcomes import spaced

        meta = campaign.settings
        units = Path(root) / "results" / "corpus" / meta["vocabulary_corpus"] / "units.parquet"
        if alpha is not None:
            check_alpha(alpha)
        if not units.is_file():
            raise InputError(f"{units}: no such file: expected the study's prepared units of "
                             f"corpus {meta['vocabulary_corpus']!r}, the bigram's training text "
                             f"(run the study there first, or name its folder with --root)")

        def texts(split):
            got = read_split(str(units), meta["language"], split)["text"].to_list()
            return [spaced(t, campaign.unit) for t in got]

        train = texts("train")
        dev = [] if alpha is not None else texts("dev")
        bettor, chosen = train_bettor(train, dev, outcomes, ALPHAS, alpha)
        return bettor, f"alpha {chosen}" + (", over characters" if campaign.unit == "char" else "")
    path = Path(model)
    if campaign.unit == "char" and (path.is_file() or path.is_dir()):
        kind = "a KenLM word n-gram" if path.is_file() else "a transformers folder"
        raise InputError(f"{kind} bets on words, and this campaign's unit is char "
                         f"({campaign.folder}): the study has no character bettor of that kind "
                         f"yet; expected bigram-eq7 (the eq. 7 bigram over characters)",
                         path=model)
    if path.is_file():
        from .bettors import WordNgramBettor

        return WordNgramBettor(path, outcomes), "KenLM word n-gram"
    if path.is_dir():
        from .neural import TokenBettor

        special = {k: v for k, v in (("bos", bos), ("eos", eos)) if v}
        return TokenBettor.from_folder(path, outcomes, special or None), "transformers LM"
    raise InputError("expected a KenLM word n-gram file (with its .json record), a transformers "
                     "model folder or bigram-eq7", path=model)


def find_study_bettors(campaign, root: str | Path, config: dict,
                       kinds) -> tuple[list[StudyBettor], list[str]]:
    """The study's bettors of the campaign's language and vocabulary corpus under ``root``, one
    per model found of each of ``kinds`` (:data:`BETTOR_KINDS`), and why each kind that has none
    has none. ``config`` is the study's config (its ``models`` sheet, for ``pretrained``). In a
    char campaign only the bigram bets."""
    meta = campaign.settings
    root, lang, corpus = Path(root), meta["language"], meta["vocabulary_corpus"]
    found: list[StudyBettor] = []
    missing: list[str] = []
    for kind in kinds:
        before = len(found)
        if kind == "bigram":
            found.append(StudyBettor(BIGRAM, "bigram, eq. 7", BIGRAM))
        elif campaign.unit == "char":
            missing.append(f"{kind}: the study has no character bettor of this kind (unit char)")
            continue
        elif kind == "kenlm-word":
            folder = root / "results" / "ngram" / corpus / lang
            for path in sorted(folder.glob(f"word-v{meta['vocab_size']}.o*.kenlm")):
                order = path.name.rsplit(".o", 1)[1].removesuffix(".kenlm")
                found.append(StudyBettor(f"kenlm-word-o{order}", f"KenLM word {order}-gram",
                                         str(path)))
        elif kind == "transformer":
            for path in sorted((root / "results" / "neural" / corpus / lang).glob("*/model")):
                found.append(StudyBettor(f"transformer-{path.parent.name}",
                                         f"Transformer ({path.parent.name})", str(path)))
        elif kind == "pretrained":
            found.extend(_pretrained(root, config, lang, corpus))
        if len(found) == before:
            where = {"kenlm-word": f"results/ngram/{corpus}/{lang}/word-v{meta['vocab_size']}"
                                   f".o*.kenlm",
                     "transformer": f"results/neural/{corpus}/{lang}/*/model",
                     "pretrained": "a model of the sheet for this language, installed under "
                                   "resources/models"}[kind]
            missing.append(f"{kind}: none found ({where}; run the study first)")
    return found, missing


def _pretrained(root: Path, config: dict, lang: str, corpus: str) -> list[StudyBettor]:
    """The model sheet's LMs of ``lang`` and ``corpus`` installed under ``resources/models``."""
    from ..config.sheet import read_model_sheet
    from ..lm.pretrained import resolve_model

    sheet = str(root / config.get("models", "config/models.tsv"))
    schema = str(root / "workflow" / "schemas" / "models.schema.yaml")
    found = []
    for row in read_model_sheet(sheet, schema):
        if lang not in row.languages or corpus not in row.corpora:
            continue
        resolved = resolve_model(vars(row), root / "resources" / "models", sheet=sheet,
                                 probe=False)
        if Path(resolved.load_from).is_dir():
            special = resolved.special_tokens()
            found.append(StudyBettor(row.model, row.description or row.model,
                                     resolved.load_from, special.get("bos"),
                                     special.get("eos")))
    return found


def campaign_contexts(campaign) -> list[tuple[str, str]]:
    """(truncation id, context) of every truncation of ``campaign``, as the bettors read them: in
    a campaign of unit ``char`` each character of the context a word."""
    from .campaign_folder import TRUNCATIONS, jsonl_records
    from .outcomes import spaced

    path = campaign.folder / TRUNCATIONS
    contexts = [(t["id"], t["context"]) for t in jsonl_records(
        path, ("id", "unit_id", "context"), '{"id", "unit_id", "context"} per line')]
    if campaign.unit == "char":
        contexts = [(tid, spaced(context, "char")) for tid, context in contexts]
    return contexts
