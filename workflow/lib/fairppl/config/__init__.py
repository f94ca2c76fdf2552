"""The study's configuration: the config file's syntax, schema and cross-references
(:mod:`.settings`), the language and model sheets (:mod:`.sheet`), and which corpus trains the
models scored on which (:mod:`.design`).

May import: :mod:`fairppl.core`.
"""
