"""Which settings of lm-evaluation-harness reproduce the study's token-LM scores (for the
conventions record and the report; lm-eval itself is not imported here).

What lm-eval 0.4.x (pinned as a test dependency, 0.4.13) does in ``HFLM.loglikelihood_rolling``
(``lm_eval/models/huggingface.py``, ``lm_eval/utils.py``): it encodes the text with
``tokenizer.encode`` -- the tokenizer's own special tokens included, unless ``add_bos_token``
is given (then ``add_special_tokens=add_bos_token``) -- prepends ``prefix_token_id`` (default:
the tokenizer's BOS, else its EOS) as context only, scores every encoded token once, in windows
of ``max_length`` positions of which each later one keeps one token of context, and charges no
end token. Its ``bits_per_byte`` is minus the summed log-likelihood over the summed UTF-8 bytes of
the texts, over ln 2.

So ``HFLM(prefix_token_id=<our start id>, add_bos_token=False)`` scores the same token ids as the
study, conditioned on the same start token, and its log-likelihood is minus the unit's nats less
the charged end token's (the last ``token_nats``), for every unit that fits one window and has
no literal special-token text (lm-eval reads such text as the control token; the study spells
it out). ``tests/unit/test_lm_eval_parity.py`` checks this against ``lm_eval`` on the real models.
"""

from __future__ import annotations

from ..core.errors import ScoringError
from .special_tokens import start_token_id

#: A text to find the special tokens the tokenizer adds by default around any text.
_PROBE = "a"


def added_special_ids(tokenizer, probe: str = _PROBE) -> tuple[list[int], list[int]]:
    """The ids the tokenizer's default encoding (``tokenizer.encode(text)``, as lm-eval calls it)
    puts before and after the text's own ids: ``(before, after)``, e.g. ``([<bos>], [])`` for
    Gemma-3, ``([], [])`` for SmolLM2."""
    plain = list(tokenizer.encode(probe, add_special_tokens=False))
    full = list(tokenizer.encode(probe))
    for i in range(len(full) - len(plain) + 1):
        if full[i:i + len(plain)] == plain:
            return full[:i], full[i + len(plain):]
    raise ScoringError(f"the tokenizer's default encoding of {probe!r} ({full}) does not contain "
                       f"its plain encoding ({plain}): cannot tell which special tokens it adds")


def lm_eval_harness_settings(tokenizer, *, start_token: str | None = None, add_bos: bool = True,
                             add_eos: bool = True, max_length: int | None = None) -> str:
    """One sentence for the conventions record: the lm-evaluation-harness settings that reproduce
    the scores made with these conventions (arguments as :func:`fairppl.lm.scoring.conventions`),
    and what its defaults do instead."""
    if not add_bos:
        return ("not reproducible: lm-eval's loglikelihood_rolling charges the first text token "
                "given a prefix token; these scores leave it uncharged")
    start_id, _ = start_token_id(tokenizer, start_token)
    name = tokenizer.convert_ids_to_tokens(start_id)
    less_end = " less the end token's" if add_eos else ""
    fits = (f"units within one window of {max_length} positions" if max_length is not None
            else "every unit")
    text = (f"HFLM(prefix_token_id={start_id}, add_bos_token=False): loglikelihood_rolling = "
            f"minus the unit's nats{less_end}, bits_per_byte = (bits{less_end}) / UTF-8 bytes, "
            f"same token ids ({fits}). Its default ")
    if tokenizer.bos_token_id is not None:
        default_id, role = int(tokenizer.bos_token_id), "the tokenizer's BOS"
    else:
        default_id, role = int(tokenizer.eos_token_id), "the tokenizer's EOS (no BOS)"
    default = tokenizer.convert_ids_to_tokens(default_id)
    before, after = added_special_ids(tokenizer)
    differences = []
    if default_id != start_id:
        differences.append(f"starts from {default!r} ({role}), not {name!r}")
    if before:
        added = " ".join(tokenizer.convert_ids_to_tokens(before))
        if before == [default_id]:
            differences.append(f"encodes the text with a second {added} after the {default} "
                               f"prefix and scores it as the text's first token")
        else:
            differences.append(f"encodes the text with {added} before it and scores it")
    if after:
        added = " ".join(tokenizer.convert_ids_to_tokens(after))
        differences.append(f"encodes the text with {added} after it and scores it")
    if not differences:
        return text + f"is the same ({name!r} as prefix, nothing added to the text)."
    return text + ", and ".join(differences) + "."
