"""The study config's checks as a user meets them in a real `snakemake --dry-run` (runs
Snakemake): an overlay's errors, the start-up refusals, a placeholder pattern that does not
compile, language lists held against the sheet, and shannon.max_unit_chars against prepared
units. The checks themselves: tests/unit/test_settings.py."""

from pathlib import Path

import pytest
import yaml

from conftest import ROOT, ahead
from fairppl.config.settings import check_config
from fairppl.config.stages import check_shannon_units
from fairppl.core.errors import InputError
from test_settings import SCHEMA, SOURCE, Row, _tests_config, _units


#: Snakemake's own message for a `--configfile` file it cannot parse (its configfile loader),
#: which names neither the file nor the line (docs/troubleshooting.md quotes it).
SNAKEMAKE_YAML_ERROR = "Config file is not valid JSON or YAML."


@pytest.mark.e2e
def test_overlay_errors_as_a_user_meets_them(tmp_path):
    """A real `snakemake --dry-run --configfile <overlay>`: a key given twice in the overlay is
    refused with the overlay's name and line; a syntax error is refused by Snakemake itself
    before the workflow runs (its message names no file), and the command the message of
    docs/troubleshooting.md gives names the file and the line."""
    import subprocess
    import sys

    from conftest import make_workdir, snakemake

    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    twice = wd / "config" / "site.yaml"
    twice.write_text("shannon:\n  seed: 1\n  seed: 2\n", encoding="utf-8")
    proc = snakemake(wd, "--dry-run", "--configfile", str(twice))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/site.yaml, line 3: key 'seed' is given twice in one mapping "
            "(first on line 2); expected each key once") in out, out[-3000:]

    broken = wd / "config" / "broken.yaml"
    broken.write_text("shannon:\n  list_lengths: [1, 10\n  seed: 2\n", encoding="utf-8")
    proc = snakemake(wd, "--dry-run", "--configfile", str(broken))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and SNAKEMAKE_YAML_ERROR in out, out[-3000:]
    assert "broken.yaml" not in out  # why the command below exists
    docs = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    assert SNAKEMAKE_YAML_ERROR in docs and "fairppl config check <file>" in docs
    check = subprocess.run([str(Path(sys.executable).parent / "fairppl"), "config", "check",
                            "config/broken.yaml"],
                           cwd=wd, capture_output=True, text=True, timeout=120)
    assert check.returncode == 2
    assert check.stderr == (
        "error: config/broken.yaml, line 3: YAML syntax error (column 7): expected ',' or ']', "
        "but got ':' (while parsing a flow sequence that starts on line 2, column 17)\n")
    # the module's own command (what the docs named before) still answers the same
    check = subprocess.run([sys.executable, "-m", "fairppl.config.settings",
                            "config/broken.yaml", "config/config.yaml"],
                           cwd=wd, capture_output=True, text=True, timeout=60)
    assert check.returncode == 2
    assert check.stderr == (
        "config/broken.yaml, line 3: YAML syntax error (column 7): expected ',' or ']', but got "
        "':' (while parsing a flow sequence that starts on line 2, column 17)\n")


@pytest.mark.e2e
def test_startup_refusals_as_a_user_meets_them(tmp_path):
    """A real `snakemake --dry-run` in a working directory: the lemma control's Transformer
    without its unlemmatized twin, and (once the Bible is prepared) a shannon.max_unit_chars no
    unit fits, are refused before any job, naming the config file and the field."""
    from conftest import make_workdir, snakemake

    from test_workflow import _edit_config

    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    _edit_config(wd, lambda c: c["lemmas"].update(neural_languages=["tur"]))
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/config.yaml: field 'lemmas.neural_languages': ['tur'] have no "
            "Transformer over characters of the unlemmatized text") in out, out[-3000:]

    _edit_config(wd, lambda c: (c["lemmas"].update(neural_languages=None),
                                c["shannon"].update(max_unit_chars=5)))
    assert snakemake(wd, "--dry-run").returncode == 0  # nothing prepared: nothing known yet
    (wd / "results" / "corpus" / "bible").mkdir(parents=True)
    _units(wd / "results" / "corpus" / "bible" / "units.parquet",
           [("bible", "1", 1, lang, "test", "Jesus wept.") for lang in ("eng", "tur", "kor")])
    # both outputs of prepare_corpus: with one missing, the plan prepares the corpus again and
    # the table on disk says nothing (test_max_unit_chars_reads_the_units_only_when_...)
    (wd / "results" / "corpus" / "bible" / "dropped.tsv").write_text("", encoding="utf-8")
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/config.yaml: field 'shannon.max_unit_chars': 5 characters is "
            "below the shortest test unit of ['eng', 'kor'] in "
            "results/corpus/bible/units.parquet (eng 11, kor 11 characters)") in out, out[-3000:]


def _workdir_editor(tmp_path):
    """A working directory of the test config and a function that edits its config/config.yaml
    keeping the order of its keys (Snakemake compares a job's params by their text: a corpus
    block written back in another key order counts as changed, and its corpus is prepared
    again)."""
    from conftest import make_workdir

    wd = make_workdir(tmp_path / "wd", ROOT / "tests" / "config")
    path = wd / "config" / "config.yaml"

    def edit(change):
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
        change(config)
        path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
    return wd, edit


@pytest.mark.e2e
def test_placeholder_pattern_that_does_not_compile_is_refused_at_start_up(tmp_path):
    """`(unclosed` passed the dry run and failed inside prepare_corpus (align_units); now the
    dry run refuses it, naming the pattern's index, the regex error and what was expected."""
    from conftest import snakemake

    config = _tests_config()
    config["corpora"]["bible"]["placeholder_patterns"] = [r"\(x\)", "[", r"\d+"]
    with pytest.raises(InputError) as err:
        check_config(config, SCHEMA, SOURCE)
    assert str(err.value) == (
        "config/config.yaml: field 'corpora.bible.placeholder_patterns[1]': '[' does not compile "
        "(unterminated character set at position 0), so the prepare_corpus job of 'bible' would "
        "fail; expected a Python regular expression (a literal bracket or parenthesis escaped "
        "with a backslash)")
    config["corpora"]["bible"]["placeholder_patterns"] = [r"\(x\)", r"\[", r"\d+"]
    check_config(config, SCHEMA, SOURCE)
    config["corpora"]["bible"]["placeholder_patterns"] = "default"
    check_config(config, SCHEMA, SOURCE)

    wd, edit = _workdir_editor(tmp_path)
    edit(lambda c: c["corpora"]["bible"].update(placeholder_patterns=["(unclosed"]))
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/config.yaml: field 'corpora.bible.placeholder_patterns[0]': "
            "'(unclosed' does not compile (missing ), unterminated subpattern at position 0)"
            ) in out, out[-3000:]
    assert "Building DAG of jobs" not in proc.stdout  # refused before any job was planned


@pytest.mark.e2e
def test_language_lists_are_held_against_the_sheet(tmp_path):
    """Every key of the schema that lists language ids is held against the language sheet at
    start-up; the two that were not: word_ngram.languages_without_spaces (any row of the sheet)
    and, with UniMorph on, morphology.unimorph.languages (rows of morphology.corpus, or languages
    of the published MCC)."""
    from conftest import snakemake

    from fairppl.config.stages import check_language_lists

    rows = [Row(c, lang) for c in ("bible", "udhr") for lang in ("eng", "tur", "kor")]
    rows.append(Row("udhr", "deu"))

    def refused(change):
        config = _tests_config()
        change(config)
        with pytest.raises(InputError) as err:
            check_language_lists(config, SOURCE, rows)
        return str(err.value)

    assert refused(lambda c: c["word_ngram"].update(languages_without_spaces=["kor", "zh"])) == (
        "config/config.yaml: field 'word_ngram.languages_without_spaces': ['zh'] are no language "
        "of the language sheet, so the list would change nothing (misspelt?); expected ids among "
        "['deu', 'eng', 'kor', 'tur']")
    assert refused(lambda c: c["word_ngram"].update(long_word_languages=["cnii"])).startswith(
        "config/config.yaml: field 'word_ngram.long_word_languages': ['cnii'] are no language "
        "of the language sheet")
    assert refused(lambda c: c["morphology"]["unimorph"].update(
        enabled=True, languages=["eng", "xyz", "deu", "spa"])) == (
        "config/config.yaml: field 'morphology.unimorph.languages': ['xyz', 'deu', 'spa'] are "
        "neither languages of morphology.corpus 'bible' in the language sheet nor of the "
        "published MCC, so the MCC table would compare their lexicons with nothing (and a "
        "made-up id has none to download); expected ids among ['eng', 'kor', 'tur']")
    # the published MCC's languages are compared too (Spanish: tests/workflow/test_unimorph.py)
    published = ["eng", "spa"]

    def accepted(change):
        config = _tests_config()
        change(config)
        check_language_lists(config, SOURCE, rows, published)

    accepted(lambda c: c["morphology"]["unimorph"].update(enabled=True, languages=["eng", "spa"]))
    with pytest.raises(InputError, match=r"\['deu'\] are neither.* expected ids among \['eng', "
                                         r"'kor', 'spa', 'tur'\]"):
        accepted(lambda c: c["morphology"]["unimorph"].update(enabled=True, languages=["deu"]))
    # UniMorph on with its default list: the default's languages outside both are named
    assert "field 'morphology.unimorph.languages': ['spa', 'fra'" in refused(
        lambda c: (c["morphology"]["unimorph"].clear(), c["morphology"]["unimorph"].update(
            enabled=True)))
    for fine in (lambda c: None,  # UniMorph off: its list is not used
                 lambda c: c["morphology"]["unimorph"].update(languages=["xyz"]),
                 lambda c: c["word_ngram"].update(languages_without_spaces=[]),
                 lambda c: c["word_ngram"].update(languages_without_spaces=["deu"]),
                 lambda c: c["morphology"].update(corpus="udhr") or c["morphology"][
                     "unimorph"].update(enabled=True, languages=["deu", "eng"])):
        accepted(fine)
    # the real start-up: the dry run of a run with UniMorph on for a language of no row
    wd, edit = _workdir_editor(tmp_path)
    edit(lambda c: c["morphology"]["unimorph"].update(enabled=True, languages=["eng", "xyz"]))
    proc = snakemake(wd, "--dry-run")
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("invalid input: config/config.yaml: field 'morphology.unimorph.languages': ['xyz'] "
            "are neither languages of morphology.corpus 'bible' in the language sheet nor of the "
            "published MCC") in out, out[-3000:]
    assert "Building DAG of jobs" not in proc.stdout


@ahead("test_max_unit_chars_reads_the_units_only_when_they_are_current")
def max_unit_chars_runs(folder):
    """The Snakemake runs of test_max_unit_chars_reads_the_units_only_when_they_are_current, done
    ahead: the Bible prepared, then dry runs with a limit no unit fits, after a change of `books`
    and with `books` back."""
    from conftest import snakemake

    wd, edit = _workdir_editor(folder)
    edit(lambda c: None)  # the config as the editor writes it, before the corpus is prepared
    prepared = snakemake(wd, "results/corpus/bible/units.parquet")
    if prepared.returncode != 0:
        return prepared, None, None, None
    edit(lambda c: c["shannon"].update(max_unit_chars=5))
    refused = snakemake(wd, "--dry-run")
    books = _tests_config()["corpora"]["bible"]["books"]
    edit(lambda c: c["corpora"]["bible"].update(books=books[:2]))
    stale = snakemake(wd, "--dry-run")
    edit(lambda c: c["corpora"]["bible"].update(books=books))
    return prepared, refused, stale, snakemake(wd, "--dry-run")


@pytest.mark.e2e
def test_max_unit_chars_reads_the_units_only_when_they_are_current(request, tmp_path):
    """shannon.max_unit_chars is held against the prepared units only where the run will not
    prepare them again: a real Bible prepared by Snakemake, then a dry run that refuses a limit
    no unit fits; after a change of `books` (prepare_corpus runs again: the table is stale) the
    same limit passes the start-up (the job that reads the new table says so if it must); with
    `books` back, the table is current again and the limit refused again (the runs done ahead,
    :func:`max_unit_chars_runs`)."""
    units = tmp_path / "units.parquet"
    _units(units, [("bible", "1", 1, "eng", "test", "Jesus wept.")])
    config = _tests_config()
    config["shannon"]["max_unit_chars"] = 5
    rows = [Row("bible", "eng")]
    with pytest.raises(InputError, match="5 characters is below the shortest test unit"):
        check_shannon_units(config, SOURCE, rows, lambda corpus: str(units),
                            lambda path: False)
    check_shannon_units(config, SOURCE, rows, lambda corpus: str(units),
                        lambda path: path == str(units))  # to be rebuilt: nothing said

    prepared, refused, stale, current = max_unit_chars_runs.result(request)
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    refusal = ("invalid input: config/config.yaml: field 'shannon.max_unit_chars': 5 characters "
               "is below the shortest test unit of ['eng', 'kor'] in "
               "results/corpus/bible/units.parquet")
    assert refused.returncode != 0 and refusal in refused.stdout + refused.stderr, \
        refused.stderr[-3000:]
    assert stale.returncode == 0, stale.stderr[-3000:]
    assert "Params have changed since last execution" in stale.stdout  # Snakemake's own reason
    assert current.returncode != 0 and refusal in current.stdout + current.stderr, \
        current.stderr[-3000:]
