"""sitegen: publish an AI review engine's measured quality as a static site readers can verify."""

__version__ = "0.1.0"
