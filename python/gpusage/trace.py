"""`python3 -m gpusage.trace`: the gpusage-trace command (gpusage.tracer holds it)."""

import sys

from gpusage.tracer import main

if __name__ == "__main__":
    sys.exit(main())
