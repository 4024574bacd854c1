import sys

from strata_daemon.faces.cli import main

sys.exit(main())
