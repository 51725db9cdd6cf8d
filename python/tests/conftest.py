"""Hypothesis profiles: `dev` (the default) draws new examples each run and keeps
exploring; `ci` (HYPOTHESIS_PROFILE=ci, set by scripts/test.sh in CI) is
derandomized, so a landing is reproducible, as the Rust property tests' fixed seed
makes theirs. BROADHEAD_HYPOTHESIS_EXAMPLES=N draws N examples per test instead,
for a longer search."""

import os
import sys

from hypothesis import HealthCheck, settings

# The tests' shared helpers (_compare.py) import by name under --import-mode=importlib.
sys.path.insert(0, os.path.dirname(__file__))

settings.register_profile(
    "dev",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
if "BROADHEAD_HYPOTHESIS_EXAMPLES" in os.environ:
    settings.register_profile(
        "longer",
        parent=settings(),
        max_examples=int(os.environ["BROADHEAD_HYPOTHESIS_EXAMPLES"]),
    )
    settings.load_profile("longer")
