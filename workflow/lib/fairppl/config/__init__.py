"""The study's configuration: the config file's syntax, schema and cross-references
(:mod:`.settings`), the newer stages' settings against each other and the sheets, with the notes on
stages that valid settings leave empty (:mod:`.stages`), the language and model sheets
(:mod:`.sheet`), and which corpus trains the models scored on which (:mod:`.design`).

May import: :mod:`fairppl.core`.
"""
