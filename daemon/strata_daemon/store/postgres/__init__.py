"""The PostgreSQL store: the same store functions as strata's SQLite file, on a server that
several hosts share. connection.py gives a PostgreSQL connection the surface the store's
functions use of an SQLite one; sql.py turns a statement written for SQLite into PostgreSQL's
where the two differ only in spelling; migrations/ build the schema."""
