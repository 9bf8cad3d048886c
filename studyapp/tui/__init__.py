"""The terminal app: the only package that imports Textual."""
