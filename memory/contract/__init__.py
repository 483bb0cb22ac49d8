"""The two-verb contract: its parameter registry, its answers, its HTTP door."""
