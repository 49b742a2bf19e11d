"""An agent whose runs fail, for `accord serve` in observability tests: its error is logged
inside the run's span."""

from accord import Agent
from agents_for_tests import Raises

failing = Agent(Raises(RuntimeError("the disk is full")), name="Failing")
