"""Shared helpers: the repository's meshes and OpenSubdiv goldens, and
matching by positions (our vertex order differs from OpenSubdiv's)."""

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest

import subla

DATA = Path(__file__).resolve().parents[3] / "data"


def read_text(path):
    if path.suffix == ".gz":
        with gzip.open(path, "rt") as f:
            return f.read()
    return path.read_text()


def parse_obj(text):
    """Positions, texture coordinates and faces (vertex and vt indices,
    0-based) of an OBJ."""
    v, vt, faces, tfaces = [], [], [], []
    for line in text.splitlines():
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            v.append([float(x) for x in p[1:4]])
        elif p[0] == "vt":
            vt.append([float(x) for x in p[1:3]])
        elif p[0] == "f":
            corners = [c.split("/") for c in p[1:]]
            faces.append([int(c[0]) - 1 for c in corners])
            if all(len(c) > 1 and c[1] for c in corners):
                tfaces.append([int(c[1]) - 1 for c in corners])
    return np.array(v), np.array(vt), faces, tfaces


def match_rows(ours, theirs, tol):
    """For each row of `theirs`, the index of the row of `ours` within
    `tol` (every row matched once)."""
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    order_o = np.lexsort(np.round(ours, 5).T[::-1])
    order_t = np.lexsort(np.round(theirs, 5).T[::-1])
    # Sorting by rounded keys puts equal points side by side; check them
    # by distance (the rounding may split a few near-ties, so fall back to
    # a nearest search where the sorted pairing fails).
    perm = np.empty(len(theirs), dtype=int)
    for a, b in zip(order_o, order_t):
        if np.abs(ours[a] - theirs[b]).max() <= tol:
            perm[b] = a
        else:
            d = np.abs(ours - theirs[b]).max(axis=1)
            perm[b] = int(np.argmin(d))
            assert d[perm[b]] <= tol, (b, theirs[b], d[perm[b]])
    assert len(set(perm.tolist())) == len(perm), "two golden points matched one of ours"
    return perm


@pytest.fixture
def data():
    return DATA


def read_mesh(path):
    """A mesh of the repository (their smoothing-group statements, which
    subla does not keep, warn; the tests expect that)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", subla.DataLossWarning)
        return subla.Mesh.read(path)
