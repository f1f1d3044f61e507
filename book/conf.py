# Sphinx configuration of Toll's book. Build it with `make book` (tools/book),
# which runs doxygen first and tells this file where the XML is.
import os
import sys

# Sphinx imports a local extension by module name from sys.path, and conf.py
# is where Sphinx expects that path to be added: the one sys.path edit the
# repository allows (tools/lint syspath). The extensions reach the tools'
# library (tools/lib) through PYTHONPATH=tools, which tools/book sets.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ext"))

project = "Toll"
author = "The Toll authors"
copyright = "the Toll authors"

# tollnumbers: the :num: and :hw: roles and the check that no measured number
# is typed by hand; tollfigures: figures drawn from book/figures/ at build
# time; tollcommands: commands in the text that the build checks; tollcode:
# code excerpts show lab regions as the starter does; tolllabs: a handout's
# grading table from its rubric (README.rst).
# tollinstructor: the instructor edition's pages (make book-instructor).
extensions = ["breathe", "sphinx.ext.todo", "tollnumbers", "tollfigures", "tollcommands", "tollcode",
              "tolllabs", "tollinstructor"]

root_doc = "index"

# Figures are numbered by chapter ("Figure 5.2") and referenced by number
# with :numref:`figure-NAME`; a figure without a caption would go unnumbered,
# so tollfigures refuses one (tests/book/check_figures.py checks the HTML).
numfig = True
numfig_secnum_depth = 1
numfig_format = {"figure": "Figure %s", "table": "Table %s", "code-block": "Listing %s"}
exclude_patterns = ["_build", "Doxyfile", "README.rst", "ext", "figures"]
# The instructor edition (tools/book --instructor: sphinx -t instructor) adds
# book/instructor/: solutions, answer notes, grading notes. The student book
# never reads those pages, and tools/mklab leaves them out of every starter.
if not tags.has("instructor"):  # noqa: F821 (Sphinx defines tags in conf.py)
    exclude_patterns.append("instructor")
templates_path = []
html_static_path = []
html_theme = "alabaster"
html_title = "Toll: a kernel that measures itself"
# The column the figures must fit: alabaster's page less its sidebar and the
# body's padding. tests/book/check_figures.py reads these two numbers.
html_theme_options = {"description": "A teaching kernel that measures itself", "fixed_sidebar": True,
                      "page_width": "1040px", "sidebar_width": "220px"}

# C++ is the language of the book; code blocks say what they are.
primary_domain = "cpp"
highlight_language = "text"

# Every reference must resolve. The types that appear inside signatures
# rendered by Breathe (uint64_t, va_list, ...) are exempt: a page that shows a
# function need not also show every type it mentions. Explicit references in
# prose (:cpp:func:`toll::panic`, :doc:, :ref:) are checked.
nitpicky = True
nitpick_ignore_regex = [("cpp:identifier", ".*")]

# Breathe reads the XML that tools/book made with book/Doxyfile.
breathe_projects = {"toll": os.environ.get("TOLL_DOXYGEN_XML", "../build/book/doxygen/xml")}
breathe_default_project = "toll"
breathe_domain_by_extension = {"h": "cpp", "cpp": "cpp"}
breathe_show_include = True

todo_include_todos = False
