"""Foundations every stage uses: errors that name file, line and field (:mod:`.errors`), atomic
output and checked table input (:mod:`.io`), text normalisation and strict UTF-8 (:mod:`.text`),
resumable chunked work (:mod:`.resume`), booktabs LaTeX tables (:mod:`.latex`).

May import: nothing else of fairppl (the bottom layer).
"""
