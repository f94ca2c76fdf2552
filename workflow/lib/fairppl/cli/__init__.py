"""The ``fairppl`` command line: the entry point and the n-gram and LM scoring commands
(:mod:`.main`), the marginal likelihood over tokenizations (:mod:`.marginal`), and what they share
(:mod:`.common`). A thin layer on top of the library: it imports the stage packages, and nothing in
the library imports it.
"""
