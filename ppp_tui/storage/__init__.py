"""Storage and files: reading run files, the SQLite store, config.toml. No textual here."""
