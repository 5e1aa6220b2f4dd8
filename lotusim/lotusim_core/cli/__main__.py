"""`python -m lotusim_core.cli`: the `lotusim` command line without the console script."""

import sys

from lotusim_core.cli import main

sys.exit(main())
