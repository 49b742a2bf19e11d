"""The `accord` command line: serve agents, and talk to any A2A agent."""
