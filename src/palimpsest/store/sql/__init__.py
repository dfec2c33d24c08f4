"""The SQL both backends share, written once in `?` form over a `Dialect` (`dialect.py`).

One mixin per part of the Store contract (`messages`, `jobs`, `summaries`, `facts`,
`documents`, `tags`, `wiki`) holds the statements that differ between SQLite and
PostgreSQL only in placeholders, list binding and value types; each backend package
supplies its dialect and the rest.
"""
