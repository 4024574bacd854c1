"""The PostgreSQL store's numbered migrations: mNNN_name.py, each a NAME and an up(conn) that
imports nothing of strata, applied by store/migrate.py as SQLite's are."""
