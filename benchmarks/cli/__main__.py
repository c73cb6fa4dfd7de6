"""``python -m svmbench.benchmarks.cli``: the same as the ``svmbench`` command."""

import sys

from svmbench.benchmarks.cli.main import main

sys.exit(main())
