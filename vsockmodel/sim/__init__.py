"""The simulation: one module per actor of the RX path (see model.py for the wiring)."""
