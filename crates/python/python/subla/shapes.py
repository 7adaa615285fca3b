"""Test meshes published by the library: each function returns a fresh
:class:`subla.Mesh`."""

from ._subla import Mesh, with_creases
from ._subla import shape as _shape


def tetrahedron() -> Mesh:
    """The regular tetrahedron (4 triangles)."""
    return _shape("tetrahedron")


def cube() -> Mesh:
    """The cube (6 quads)."""
    return _shape("cube")


def octahedron() -> Mesh:
    """The regular octahedron (8 triangles)."""
    return _shape("octahedron")


def icosahedron() -> Mesh:
    """The regular icosahedron (20 triangles)."""
    return _shape("icosahedron")


def dodecahedron() -> Mesh:
    """The regular dodecahedron (12 pentagons)."""
    return _shape("dodecahedron")


def bipyramid(k: int) -> Mesh:
    """Two apexes of valence ``k`` over a ``k``-gon (triangles)."""
    return _shape("bipyramid", k)


def prism(k: int) -> Mesh:
    """A ``k``-gonal prism: two ``k``-gons and ``k`` quads."""
    return _shape("prism", k)


def quad_torus(m: int, n: int) -> Mesh:
    """An ``m`` x ``n`` torus of quads (every vertex regular)."""
    return _shape("quad_torus", m, n)


def triangle_torus(m: int, n: int) -> Mesh:
    """An ``m`` x ``n`` torus of triangles (every vertex of valence 6)."""
    return _shape("triangle_torus", m, n)


def quad_grid(w: int, h: int) -> Mesh:
    """A ``w`` x ``h`` grid of quads with a boundary."""
    return _shape("quad_grid", w, h)


def triangle_grid(w: int, h: int) -> Mesh:
    """A ``w`` x ``h`` grid of quads split into triangles, with a boundary."""
    return _shape("triangle_grid", w, h)


def quad_sphere(k: int) -> Mesh:
    """A cube-sphere of ``6 k^2`` quads (eight vertices of valence 3)."""
    return _shape("quad_sphere", k)


def fan(k: int) -> Mesh:
    """``k`` triangles around one vertex of valence ``k``, closed by a
    ``k``-gon."""
    return _shape("fan", k)


def quad_disk(k: int, rings: int) -> Mesh:
    """A disk of quads around one vertex of valence ``k``, ``rings`` rings
    wide."""
    return _shape("quad_disk", k, rings)


def triangle_disk(k: int, rings: int) -> Mesh:
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
