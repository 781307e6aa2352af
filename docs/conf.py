"""Sphinx configuration of the documentation site (``python -m sphinx -W -b html docs docs/_build``)."""

from __future__ import annotations

from agentgym_budget import __version__

project = "agentgym-budget"
release = version = __version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "myst_parser"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"agentgym-budget {__version__}"
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_mock_imports: list[str] = []
napoleon_google_docstring = True
napoleon_numpy_docstring = False
