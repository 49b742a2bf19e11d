"""A2A extensions: declare them on an agent, negotiate them per request, ship your own."""

from accord.core.extension import Extension, ExtensionMethod
from accord.extensions.negotiation import Activation, negotiate, requested_extensions
from accord.extensions.timing import TIMING_URI, TimingExtension

__all__ = [
    "TIMING_URI",
    "Activation",
    "Extension",
    "ExtensionMethod",
    "TimingExtension",
    "negotiate",
    "requested_extensions",
]
