"""Hypothesis profiles for the fnad.numpy battery: "ci" (quick, derandomized, the default)
and "thorough" (many examples, used for the report). Choose with HYPOTHESIS_PROFILE."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=12, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=300, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much])
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE in ("ci", "thorough"):
    settings.load_profile(PROFILE)
