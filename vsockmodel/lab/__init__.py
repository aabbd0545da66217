"""The browser lab: its worker's entry points (api, calls), its figures (charts)
and its Python mode (pycode; ``vsockmodel.lab.show`` draws in the lab)."""

from .pycode import show

__all__ = ["show"]
