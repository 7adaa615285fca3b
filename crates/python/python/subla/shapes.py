"""Test meshes published by the library: each function returns a fresh
:class:`subla.Mesh`."""

from ._subla import shape as _shape
from ._subla import with_creases


def tetrahedron():
    """The regular tetrahedron (4 triangles)."""
    return _shape("tetrahedron")


def cube():
    """The cube (6 quads)."""
    return _shape("cube")


def octahedron():
    """The regular octahedron (8 triangles)."""
    return _shape("octahedron")


def icosahedron():
    """The regular icosahedron (20 triangles)."""
    return _shape("icosahedron")


def dodecahedron():
    """The regular dodecahedron (12 pentagons)."""
    return _shape("dodecahedron")


def bipyramid(k):
    """Two apexes of valence ``k`` over a ``k``-gon (triangles)."""
    return _shape("bipyramid", k)


def prism(k):
    """A ``k``-gonal prism: two ``k``-gons and ``k`` quads."""
    return _shape("prism", k)


def quad_torus(m, n):
    """An ``m`` x ``n`` torus of quads (every vertex regular)."""
    return _shape("quad_torus", m, n)


def triangle_torus(m, n):
    """An ``m`` x ``n`` torus of triangles (every vertex of valence 6)."""
    return _shape("triangle_torus", m, n)


def quad_grid(w, h):
    """A ``w`` x ``h`` grid of quads with a boundary."""
    return _shape("quad_grid", w, h)


def triangle_grid(w, h):
    """A ``w`` x ``h`` grid of quads split into triangles, with a boundary."""
    return _shape("triangle_grid", w, h)


def quad_sphere(k):
    """A cube-sphere of ``6 k^2`` quads (eight vertices of valence 3)."""
    return _shape("quad_sphere", k)


def fan(k):
    """``k`` triangles around one vertex of valence ``k``, closed by a
    ``k``-gon."""
    return _shape("fan", k)


def quad_disk(k, rings):
    """A disk of quads around one vertex of valence ``k``, ``rings`` rings
    wide."""
    return _shape("quad_disk", k, rings)


def triangle_disk(k, rings):
    """A disk of triangles around one vertex of valence ``k``, ``rings``
    rings wide."""
    return _shape("triangle_disk", k, rings)


__all__ = [
    "bipyramid",
    "cube",
    "dodecahedron",
    "fan",
    "icosahedron",
    "octahedron",
    "prism",
    "quad_disk",
    "quad_grid",
    "quad_sphere",
    "quad_torus",
    "tetrahedron",
    "triangle_disk",
    "triangle_grid",
    "triangle_torus",
    "with_creases",
]
