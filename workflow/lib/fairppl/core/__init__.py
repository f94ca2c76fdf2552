"""Foundations every stage uses: errors that name file, line and field (:mod:`.errors`), atomic
output and checked table input (:mod:`.io`), text normalisation and strict UTF-8 (:mod:`.text`),
resumable chunked work (:mod:`.resume`), resumable per-document runs, one JSON line per finished
document (:mod:`.runner`), booktabs LaTeX tables (:mod:`.latex`), the digests that seal
intermediates and the start-up check of them (:mod:`.integrity`).

May import: nothing else of fairppl (the bottom layer).
"""
