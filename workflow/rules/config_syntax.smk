# Parses config/config.yaml before the Snakefile's `configfile:` loads it: Snakemake's own message
# for a YAML syntax error names neither the file nor the line. (Files given with --configfile are
# loaded by Snakemake before any workflow code runs.)
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

if str(Path(workflow.basedir) / "workflow" / "lib") not in sys.path:
    sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "lib"))

from fairppl.core.errors import InputError
from fairppl.config.settings import check_yaml_syntax

try:
    check_yaml_syntax("config/config.yaml")
except InputError as err:
    raise WorkflowError(f"invalid input: {err}") from None
