"""The package's version: the single source (packaging reads it, ``agentgym_budget.__version__`` hands it on)."""

__version__ = "0.1.0"
