# Parses config/config.yaml before the Snakefile's `configfile:` loads it, and every file given
# with --configfile (config/gpu, config/europarl, a site's own overlay): a YAML syntax error and a
# key given twice in one mapping (YAML keeps the last silently) are named with the file and line.
# Snakemake loads the --configfile files itself before any workflow code runs, so a syntax error
# in one of them stops it first with "Config file is not valid JSON or YAML", which names neither
# the file nor the line: `.venv/bin/python -m fairppl.config.settings <file>` does
# (docs/troubleshooting.md).
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

if str(Path(workflow.basedir) / "workflow" / "lib") not in sys.path:
    sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "lib"))

from fairppl.core.errors import InputError
from fairppl.config.settings import check_config_files

try:
    check_config_files(["config/config.yaml", *workflow.configfiles])
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
