"""The only place SQL is written: the database, its one write path, its migrations, and one module
per table group. SQLite is the bus: every process opens the same WAL database."""
