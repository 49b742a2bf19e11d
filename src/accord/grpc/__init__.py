"""A2A over gRPC: the 1.0 (`lf.a2a.v1`) and 0.3 (`a2a.v1`) services: messages and RPC tables."""
