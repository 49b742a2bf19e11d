"""Sample agents that ship with accord."""
