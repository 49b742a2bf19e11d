"""accord: the Agent2Agent (A2A) protocol for Python."""
