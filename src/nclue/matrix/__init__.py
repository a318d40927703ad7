"""The capability matrix: a TOML spec of systems x query forms, run with skip-if-unchanged."""
