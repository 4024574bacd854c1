"""Numbered migrations, one module each (mNNN_name.py: NAME and up(conn)), applied in order by
strata_daemon.store.migrate. A migration never imports live code: what it does stays what it
did when it was written. A new schema change is a new module, never an edit of an applied one."""
