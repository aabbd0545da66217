"""Fixtures and session set-up shared by the test modules."""

import os

from hypothesis import HealthCheck, settings

# Property-based tests run the same examples on every run (derandomize, no
# example database): a failure in CI is a failure on a developer's machine.
# HYPOTHESIS_PROFILE=long explores far more examples, each run different
# (DEVELOPMENT.md, "The fuzzer").
settings.register_profile("suite", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
