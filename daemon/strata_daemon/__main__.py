import sys

from strata_daemon.faces.cli.entry import main

sys.exit(main())
