import sys

from strata_daemon.faces.cli.main import main

sys.exit(main())
