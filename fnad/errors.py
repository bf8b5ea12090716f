"""Errors that fnad raises for misuse of its transforms.

Example:
  try:
      leaked_tracer * 2
  except fnad.errors.UnexpectedTracerError:
      ...
"""

from ._tracer import UnexpectedTracerError as UnexpectedTracerError

__all__ = ["UnexpectedTracerError"]
