"""Sphinx configuration of the documentation site (``python -m sphinx -W -b html docs docs/_build``)."""

from __future__ import annotations

import sys
from pathlib import Path

from agentgym_budget import __version__

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "agentgym-budget"
release = version = __version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "myst_parser", "unicode_math"]
html_math_renderer = "unicode"  # math as HTML at build time: no MathJax, no CDN (docs/_ext/unicode_math.py)
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext"]
html_theme = "furo"
html_title = f"agentgym-budget {__version__}"
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False
