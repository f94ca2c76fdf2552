"""The ``fairppl`` command line: the entry point :func:`main` and the n-gram scoring command
(:mod:`.app`), the marginal likelihood over tokenizations (:mod:`.marginal`), the Shannon game's
campaign files and scorer (:mod:`.campaign`), and what they share (:mod:`.common`). A thin layer on top of the library: it imports the stage packages, and nothing in
the library imports it.
"""

from .app import main

__all__ = ["main"]
