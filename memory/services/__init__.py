"""The black box behind the contract: writes are services, reads are selectors."""
