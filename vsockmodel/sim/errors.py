"""Errors a simulation run can end with.

Plain Python on purpose: setup.py compiles the other simulator modules with
mypyc, which cannot compile subclasses of built-in exceptions.
"""


class SimulationLimitExceeded(RuntimeError):
    """A run hit its event or wall-time bound (a bug or an extreme configuration)."""


class Deadlock(RuntimeError):
    """Nothing is left to happen but the transfer is not complete."""
