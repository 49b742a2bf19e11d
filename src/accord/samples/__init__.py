"""Sample agents that ship with accord, each showing one part of the protocol (docs/samples.md)."""
