"""Shared look and data access of the book's matplotlib figures.

Each figure script is run as `python3 <figure>.py OUT.svg` by tollfigures.py
(book/ext/) and reads only what the repository holds: book/generated/."""

import csv
import os
import sys

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

GENERATED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "generated")

plt.rcParams.update({
    "font.size": 10, "axes.spines.top": False, "axes.spines.right": False,
    "svg.hashsalt": "toll", "svg.fonttype": "none", "figure.dpi": 100,
})

COLOURS = {"3/1": "#4c72b0", "3/1-pti": "#55a868", "4/4": "#c44e52", "4/4 fast": "#c44e52",
           "4/4 slow": "#8172b2", "seed": "#937860", "kernel": "#dd8452", "user": "#4c72b0",
           "tramp": "#8c8c8c"}


def results():
    """(configuration, metric) -> value from book/generated/results.csv."""
    with open(os.path.join(GENERATED, "results.csv"), newline="") as f:
        return {(r["configuration"], r["metric"]): float(r["value"]) for r in csv.DictReader(f)}


def rows(name):
    with open(os.path.join(GENERATED, name), newline="") as f:
        return list(csv.DictReader(f))


def save(fig):
    out = sys.argv[1]
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None})
