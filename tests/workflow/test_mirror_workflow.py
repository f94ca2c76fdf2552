"""The workflow's download rule reading a local mirror (FAIRPPL_MIRROR; runs Snakemake) with every
URL unreachable. The mirror through the library: tests/unit/test_mirror.py."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from conftest import assert_ok, snakemake
from fairppl.corpus.mirror import ENV
from test_europarl import DE, FR, _tgz
from test_europarl_workflow import _europarl_workdir
from test_mirror import NOWHERE, _flores_like
from test_mirror import mirror  # noqa: F401  a fixture: pytest finds it by name here


@pytest.mark.e2e
def test_the_download_rule_reads_the_mirror_from_the_environment(tmp_path, mirror, monkeypatch):
    """The workflow's download rule (a local rule) with every URL unreachable: a Europarl
    corpus's pair archives and a url corpus's archive come from the mirror, checked; a changed
    archive there stops the run with the mirror's path."""
    shas = {"de-en": _tgz(mirror / "de-en.tgz", "de-en", DE),
            "fr-en": _tgz(mirror / "fr-en.tgz", "fr-en", FR)}
    flores_sha = _flores_like(mirror / "flores200_dataset.tar.gz")
    wd = _europarl_workdir(tmp_path, NOWHERE, shas)
    cfg_path = wd / "config" / "config.yaml"
    cfg = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
    cfg["corpora"]["flores200"] = {
        "enabled": True, "type": "url", "url": f"{NOWHERE}/nllb/flores200_dataset.tar.gz",
        "sha256": flores_sha, "format": "tar_lines", "placeholder_patterns": [],
        "members": ["flores200_dataset/dev/{source_id}.dev",
                    "flores200_dataset/devtest/{source_id}.devtest"]}
    cfg_path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    with (wd / "config" / "languages.tsv").open("a", encoding="utf-8") as sheet:
        sheet.write("flores200\teng\teng\teng\tLatn\teng_Latn\ttrue\n"
                    "flores200\tdeu\tdeu\tdeu\tLatn\tdeu_Latn\tfalse\n")
    monkeypatch.setenv(ENV, str(mirror))
    downloads = wd / "resources" / "downloads"
    targets = [f"resources/downloads/europarl/{pair}.tgz" for pair in shas] + [
        "resources/downloads/flores200/flores200_dataset.tar.gz"]
    assert_ok(snakemake(wd, *targets))
    for pair, sha in shas.items():
        assert hashlib.sha256((downloads / "europarl" / f"{pair}.tgz").read_bytes()
                              ).hexdigest() == sha
    assert hashlib.sha256((downloads / "flores200" / "flores200_dataset.tar.gz").read_bytes()
                          ).hexdigest() == flores_sha
    log = (wd / "logs" / "download_corpus" / "europarl" / "de-en.tgz.log").read_text()
    assert f"read from {mirror / 'de-en.tgz'}; checksum verified" in log
    # the fr-en archive in the mirror replaced by another: refused, nothing lands
    (downloads / "europarl" / "fr-en.tgz").unlink()
    _tgz(mirror / "fr-en.tgz", "fr-en", FR[:-1])
    proc = snakemake(wd, *targets)
    assert proc.returncode != 0
    assert (f"{mirror / 'fr-en.tgz'}: checksum mismatch in the mirror ({ENV}) for "
            f"{NOWHERE}/fr-en.tgz: expected sha256 {shas['fr-en']}") in proc.stdout + proc.stderr
    assert not (downloads / "europarl" / "fr-en.tgz").exists()
