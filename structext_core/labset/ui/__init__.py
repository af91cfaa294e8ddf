"""The lab's own benchmark's Streamlit glue."""
