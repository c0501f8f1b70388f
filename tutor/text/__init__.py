"""Numbers and cells become words: the one formatter, cell names, shared prose."""
