"""``python -m fairppl.cli ...``: the ``fairppl`` command (:func:`fairppl.cli.main`, the same
sub-commands, output and exit status) where its installed entry point is not on PATH, e.g. with
the library only on PYTHONPATH."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
