"""ffplan: plan, configure and verify Fire-Flyer-style InfiniBand GPU clusters."""

__version__ = "0.1.0"
