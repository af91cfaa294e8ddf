"""StrucText-Eval's Streamlit glue: cached suites, its study form, the Real-Test rewriting widgets."""
