"""vsockmodel: a discrete-event model of the Linux virtio-vsock guest receive path."""

__version__ = "0.1.0"

from .costs import Costs, default_costs
from .model import run, simulate
from .params import Params, make_params, parse_size
from .replications import compare, replicate
from .results import Result
from .sim.errors import Deadlock, SimulationLimitExceeded
from .variants import VARIANTS

__all__ = ["run", "simulate", "replicate", "compare", "Result", "Params", "make_params", "parse_size",
           "Costs", "default_costs", "VARIANTS", "Deadlock", "SimulationLimitExceeded"]
