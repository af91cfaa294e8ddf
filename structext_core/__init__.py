"""StrucText Studio's core: generate, solve, audit and score StrucText-Eval samples.

Nothing here imports Streamlit except :mod:`structext_core.ui`, which only the
pages use.
"""

__version__ = "0.1.0"
