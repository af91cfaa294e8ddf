"""AIBench's Streamlit glue: its Results and Explore sections, its study form, their widgets."""
