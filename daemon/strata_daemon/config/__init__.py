"""What a person sets: the settings table, loading strata.toml, the home's folders and templates, and the tuned constants."""
