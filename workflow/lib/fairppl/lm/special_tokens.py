"""Start and end tokens: the vocabulary entries a token LM's units are framed with.

The scorer (:mod:`fairppl.lm.scoring`) prepends a start token as context and appends a charged end
token. By default they are the tokenizer's BOS (else its EOS) and its EOS; a pretrained model's
sheet row may name others (``bos``/``eos`` columns of ``config/models.tsv``, e.g. a document
separator instead of chat markers). A name must be an entry of the vocabulary spelled exactly: a
name that is not one would silently map to ``<unk>``, so it is an error here instead --
:class:`fairppl.core.errors.InputError` naming the sheet, line and column when the sheet is checked
(:func:`check_special_tokens`), :class:`fairppl.core.errors.ScoringError` when scoring.

Needs no model and no torch: the workflow checks the sheet while it builds its job graph.
"""

from __future__ import annotations

from ..core.errors import InputError, ScoringError


def check_special_tokens(tokenizer, *, model: str, bos: str | None, eos: str | None,
                         sheet: str | None = None, line: int | None = None) -> None:
    """Raise InputError naming the sheet, its line and the column (``bos`` or ``eos``) unless
    each given token is an entry of ``tokenizer``'s vocabulary (a transformers tokenizer or a
    ``tokenizers.Tokenizer``)."""
    lookup = getattr(tokenizer, "token_to_id", None)
    for column, token in (("bos", bos), ("eos", eos)):
        if token is None:
            continue
        if lookup is not None:
            found = lookup(token) is not None
        else:
            ids = tokenizer.convert_tokens_to_ids(token)
            found = ids is not None and tokenizer.convert_ids_to_tokens(int(ids)) == token
        if not found:
            raise InputError(f"column '{column}': token {token!r} is not in the vocabulary of "
                             f"model '{model}': expected one of its tokens, spelled exactly "
                             f"(e.g. its document separator)", path=sheet, line=line)


def token_id(tokenizer, token: str, what: str) -> int:
    """The id of ``token`` (a vocabulary entry spelled as the tokenizer spells it); ScoringError
    naming ``what`` if it is not one (an unknown token would silently map to ``<unk>``)."""
    value = tokenizer.convert_tokens_to_ids(token)
    if value is None or tokenizer.convert_ids_to_tokens(int(value)) != token:
        raise ScoringError(f"{what} {token!r} is not in the tokenizer's vocabulary "
                           f"({len(tokenizer)} tokens): expected one of its tokens, e.g. its BOS "
                           f"{tokenizer.bos_token!r} or EOS {tokenizer.eos_token!r}")
    return int(value)


def start_token_id(tokenizer, start_token: str | None = None) -> tuple[int, str]:
    """The start-of-text context id and where it comes from: ``"given"`` (``start_token``),
    ``"bos"`` (the tokenizer's BOS) or ``"eos"`` (no BOS: its EOS stands in). ScoringError if
    the tokenizer has neither."""
    if start_token is not None:
        return token_id(tokenizer, start_token, "start token"), "given"
    if tokenizer.bos_token_id is not None:
        return int(tokenizer.bos_token_id), "bos"
    if tokenizer.eos_token_id is not None:
        return int(tokenizer.eos_token_id), "eos"
    raise ScoringError("the tokenizer has neither a BOS nor an EOS token: there is no "
                       "start-of-text context to score the first token from")


def end_token_id(tokenizer, end_token: str | None = None) -> int | None:
    """The id of the charged end token: ``end_token`` if given, else the tokenizer's EOS (None
    if it has none)."""
    if end_token is not None:
        return token_id(tokenizer, end_token, "end token")
    return None if tokenizer.eos_token_id is None else int(tokenizer.eos_token_id)
