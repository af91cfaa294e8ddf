"""StrucText Studio's core, in layers; each imports only the ones before it:

- :mod:`structext_core.settings`: every environment variable and default path, once;
- :mod:`structext_core.text`: text every layer shares (limits, safe text, counted nouns);
- :mod:`structext_core.protocol`: what a benchmark declares, and the benchmarks found by entry point;
- :mod:`structext_core.evaluation`: what scoring and harness logs every benchmark shares;
- :mod:`structext_core.studio`: storage, accounts, studies, campaigns, the sandbox;
- :mod:`structext_core.views`: pure data and charts for the pages;
- :mod:`structext_core.cli`: the command line;
- :mod:`structext_core.ui`: the Streamlit glue every page shares;
- above them, each benchmark's own package (its member module registered by entry point).

Only the UI imports Streamlit: :mod:`structext_core.ui` and a benchmark's own ``ui`` and ``pages``
(tests/test_layers.py enforces both rules).
"""

__version__ = "0.1.0"
