import sys

from strata_bench.reference.generate import main

sys.exit(main())
