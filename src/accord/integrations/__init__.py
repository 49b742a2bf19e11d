"""Framework adapters: an agent written with PydanticAI, LangGraph, the OpenAI Agents SDK or
Google's ADK served as an accord `Agent` (one module per framework, each an optional extra)."""
