"""Web safety the server, the webhooks, the UI and the host share: the Host names a request may
name, whether it comes from another origin, where an outbound request may connect, and a
bearer token checked."""
