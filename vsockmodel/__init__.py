"""vsockmodel: a discrete-event model of the Linux virtio-vsock guest receive path.

Layers, each importing only those above it:

- ``model``: the kernel's constants and rules, the variants, the parameter
  schema, the costs and their origins;
- ``sim``: the simulation (the actors on a simpy clock) and its results;
- ``scenarios``: scripted set-ups (the v1 review's two-packet scenario);
- ``study``: replications and intervals, the series' measurements,
  calibration, validation, benchmarks;
- ``bookkit`` (figures, widgets, style) and ``lab`` (the browser lab's entry
  points): the book's tools, which nothing above imports.
"""

from ._version import read_version

__version__ = read_version()

from .model.costs import Costs, default_costs
from .model.params import Params, make_params, parse_size
from .model.variants import VARIANTS
from .sim.errors import Deadlock, SimulationLimitExceeded
from .sim.results import Result
from .sim.run import run, simulate
from .study.replications import compare, replicate

__all__ = ["run", "simulate", "replicate", "compare", "Result", "Params", "make_params", "parse_size",
           "Costs", "default_costs", "VARIANTS", "Deadlock", "SimulationLimitExceeded"]
