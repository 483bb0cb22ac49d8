"""The internal door: direct access to the stores, opened only by the machine secret."""
