"""StrucText Studio's core, in layers; each imports only the ones before it:

- :mod:`structext_core.settings`: every environment variable and default path, once;
- :mod:`structext_core.structext_eval`: formats, tasks, samples, suites, the audit;
- :mod:`structext_core.evaluation`: prompts, runner, scoring, result import, harnesses;
- :mod:`structext_core.studio`: storage, accounts, studies, campaigns, the sandbox;
- :mod:`structext_core.views`: pure data and charts for the pages;
- :mod:`structext_core.cli`: the command line;
- :mod:`structext_core.ui`: the Streamlit glue every page shares.

Only the UI imports Streamlit: :mod:`structext_core.ui` and a benchmark's own ``ui`` and ``pages``
(tests/test_layers.py enforces both rules).
"""

__version__ = "0.1.0"
