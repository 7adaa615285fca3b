"""Meshes, plans, operators and face-varying channels from Python, checked
against OpenSubdiv's goldens and against each other."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse

import subla
from conftest import match_rows, parse_obj, read_mesh, read_text


@pytest.mark.parametrize(
    "name, scheme, level",
    [
        ("catmark_cube", "catmark", 2),
        ("catmark_cube_creases2", "catmark", 2),
        ("catmark_edgecorner", "catmark", 2),
        ("catmark_hole_test1", "catmark", 2),
        ("bilinear_nonquads0", "bilinear", 2),
        ("loop_cube_creases0", "loop", 2),
    ],
)
def test_plans_match_opensubdiv(data, name, scheme, level):
    mesh = read_mesh(data / "meshes" / "osd" / f"{name}.obj")
    v, _, faces, _ = parse_obj(read_text(data / "golden" / scheme / f"{name}.L{level}.obj"))
    paths = next(s[3] for s in subla.schemes() if s[0] == scheme)
    for path in [None, *paths]:
        plan = subla.Plan(mesh, scheme, level, path=path)
        y = plan.eval(mesh.positions)
        # Holes are left out of the golden's faces, not of its vertices.
        assert y.shape == v.shape
        perm = match_rows(y, v, 1e-6)
        # The golden's faces, in our numbering, are among ours (same sets
        # of vertices, holes aside).
        sizes, verts = plan.faces()
        ours = set()
        start = 0
        for s in sizes:
            ours.add(frozenset(verts[start : start + s].tolist()))
            start += s
        for f in faces:
            assert frozenset(perm[i] for i in f) in ours


def test_eval_dtypes_strides_and_out():
    mesh = subla.shapes.quad_torus(6, 5)
    plan = subla.Plan(mesh, "catmark", 2)
    x = mesh.vertices
    y = plan.eval(x)
    assert y.dtype == np.float64 and y.shape == (plan.output_len, 3)
    # Any strides: a column-major copy and a strided view give the same bits.
    assert np.array_equal(plan.eval(np.asfortranarray(x)), y)
    wide = np.zeros((x.shape[0], 6))
    wide[:, ::2] = x
    assert np.array_equal(plan.eval(wide[:, ::2]), y)
    # float32 in, float32 out, within f32 rounding.
    y32 = plan.eval(x.astype(np.float32))
    assert y32.dtype == np.float32
    assert np.abs(y32 - y).max() < 1e-5
    # Into the caller's array, bit-equal, returned as is.
    out = np.empty((plan.output_len, 3))
    assert plan.eval(x, out=out) is out
    assert np.array_equal(out, y)
    # Lists are converted; any number of channels.
    more = np.hstack([x, x[:, :1] ** 2])
    assert plan.eval(more.tolist()).shape == (plan.output_len, 4)
    # Same input, same bits.
    assert np.array_equal(plan.eval(x), y)


def test_eval_refuses_bad_shapes():
    mesh = subla.shapes.cube()
    plan = subla.Plan(mesh, "catmark", 1)
    with pytest.raises(ValueError, match="rows"):
        plan.eval(np.zeros((7, 3)))
    with pytest.raises(ValueError, match="2-D"):
        plan.eval(np.zeros(8))
    with pytest.raises(ValueError, match="shape"):
        plan.eval(mesh.vertices, out=np.zeros((3, 3)))
    with pytest.raises(ValueError, match="dtype"):
        plan.eval(mesh.vertices, out=np.zeros((plan.output_len, 3), dtype=np.float32))


@pytest.mark.parametrize("scheme, shape", [("catmark", "cube"), ("loop", "icosahedron"), ("sqrt3", "octahedron")])
def test_operators_compose_to_the_plan(scheme, shape):
    mesh = getattr(subla.shapes, shape)()
    plan = subla.Plan(mesh, scheme, 3)
    x = mesh.vertices
    y = plan.eval(x)
    ops = plan.operators()
    assert len(ops) == 3
    assert all(isinstance(m, scipy.sparse.csr_matrix) for m in ops)
    z = x
    for level, m in enumerate(ops):
        assert m.shape == (plan.level_len(level + 1), plan.level_len(level))
        assert (abs(m - plan.operator(level)) > 0).nnz == 0
        # Affine: every row sums to 1.
        assert np.allclose(np.asarray(m.sum(axis=1)).ravel(), 1.0)
        z = m @ z
    assert np.abs(z - y).max() < 1e-12
    r = plan.composed()
    assert r.shape == (plan.output_len, plan.input_len)
    assert np.abs(r @ x - y).max() < 1e-12


def test_limit_operator_projects_to_the_limit():
    mesh = subla.shapes.quad_sphere(3)
    coarse = subla.Plan(mesh, "catmark", 2)
    fine = subla.Plan(mesh, "catmark", 4)
    lim = coarse.limit() @ coarse.eval(mesh.vertices)
    # The limit points of level 2 are points of the limit surface: level 4
    # approaches them (its vertices over level 2's are every 4th).
    assert lim.shape == (coarse.output_len, 3)
    y4 = fine.eval(mesh.vertices)
    d = np.abs(lim[:, None, :] - y4[None, :, :]).max(axis=2).min(axis=1)
    assert d.max() < 0.02


def test_mesh_construction_tags_and_arrays():
    x = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0]]
    m = subla.Mesh(
        x,
        [[0, 1, 2, 3], [1, 4, 5, 2]],
        creases=[(1, 2, 2.5)],
        corners=[(0, 1.0)],
        boundary="edge_and_corner",
        crease_method="chaikin",
    )
    assert (m.num_vertices, m.num_faces, m.num_edges) == (6, 2, 7)
    assert m.creases == [(1, 2, 2.5)]
    assert m.corners == [(0, 1.0)]
    assert m.options["boundary"] == "edge_and_corner"
    assert m.options["crease_method"] == "chaikin"
    assert m.faces == [[0, 1, 2, 3], [1, 4, 5, 2]]
    assert m.face_sizes.tolist() == [4, 4]
    assert m.edges.shape == (7, 2)
    flat = subla.Mesh.from_arrays(np.array(x, float), [4, 4], [0, 1, 2, 3, 1, 4, 5, 2])
    assert flat.faces == m.faces
    mm = m.mesh_matrix()
    assert mm.shape == (6, 2)
    assert mm[1, 0] == 2 and mm[1, 1] == 1 and mm[2, 1] == 4


def test_obj_round_trip(tmp_path, data):
    mesh = read_mesh(data / "meshes" / "osd" / "catmark_fvar_bound0.obj")
    assert mesh.texcoords is not None
    out = tmp_path / "copy.obj"
    mesh.write(out)
    back = subla.Mesh.read(out)
    assert back.faces == mesh.faces
    assert np.array_equal(back.vertices, mesh.vertices)
    values, indices = back.texcoords
    v0, i0 = mesh.texcoords
    assert np.array_equal(values[indices], v0[i0])


def test_face_varying_matches_opensubdiv(data):
    name, mode = "catmark_fvar_bound0", "corners-only"
    files = sorted((data / "golden" / "fvar").glob(f"{name}.L2.*.obj.gz"))
    assert files, "the golden is in the repository"
    golden = files[0]
    mode = golden.name.split(".")[2].replace("-", "_")
    mesh = read_mesh(data / "meshes" / "osd" / f"{name}.obj")
    fv = subla.FaceVaryingPlan(mesh, "catmark", 2, mode=mode)
    assert fv.path is None and fv.mode
    tc, _ = mesh.texcoords
    values = fv.eval(tc)
    indices = fv.indices()
    for m in fv.operators():
        assert np.allclose(np.asarray(m.sum(axis=1)).ravel(), 1.0)
    plan = subla.Plan(mesh, "catmark", 2)
    y = plan.eval(mesh.positions)
    v, vt, faces, tfaces = parse_obj(read_text(golden))
    perm = match_rows(y, v, 1e-6)
    sizes, verts = plan.faces()
    starts = np.concatenate([np.zeros(1, np.int64), np.cumsum(sizes, dtype=np.int64)])
    corner_of = {}
    for f in range(len(sizes)):
        for c in range(starts[f], starts[f + 1]):
            corner_of[(f, int(verts[c]))] = c
    face_of = {frozenset(verts[starts[f] : starts[f + 1]].tolist()): f for f in range(len(sizes))}
    for gf, gt in zip(faces, tfaces):
        f = face_of[frozenset(perm[i] for i in gf)]
        for gv, gtv in zip(gf, gt):
            ours = values[indices[corner_of[(f, perm[gv])]]]
            assert np.abs(ours - vt[gtv]).max() < 1e-6


def test_subdivide_carries_what_it_can(data):
    mesh = read_mesh(data / "meshes" / "osd" / "catmark_fvar_bound0.obj")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fine = subla.subdivide(mesh, "catmark", 2)
    assert fine.num_faces == 16 * mesh.num_faces
    assert fine.texcoords is not None
    assert fine.channels == mesh.channels
    # A scheme without face-varying rules says what it leaves out.
    tri = subla.Mesh(
        subla.shapes.octahedron().vertices,
        subla.shapes.octahedron().faces,
        texcoords=(np.zeros((1, 2)), np.zeros(24, dtype=np.uint32)),
    )
    with pytest.warns(subla.DataLossWarning, match="texcoords"):
        out = subla.subdivide(tri, "sqrt3", 2)
    assert out.texcoords is None


def test_schemes_and_paths():
    names = [s[0] for s in subla.schemes()]
    assert {"catmark", "bilinear", "loop", "loop-cgal", "sqrt3"} <= set(names)
    mesh = subla.shapes.cube()
    plans = [subla.Plan(mesh, "catmark", 2, path=p) for p in ["kernels", "algebra", "edge-friend", "halfedge"]]
    ys = [p.eval(mesh.vertices) for p in plans]
    # Different numberings, same points.
    for y in ys[1:]:
        match_rows(y, ys[0], 1e-12)


def test_errors_are_typed_and_name_the_element():
    x = np.zeros((5, 3))
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh(x, [[0, 1, 2], [0, 1, 3], [0, 1, 4]], validation="manifold")
    assert e.value.kind == "NonManifoldEdge"
    assert sorted(e.value.edge) == [0, 1]
    assert isinstance(e.value, subla.SublaError)
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh(x, [[0, 1, 2], [2, 1, -3]])
    assert (e.value.kind, e.value.face, e.value.index) == ("IndexOutOfRange", 1, -3)
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh(x, [[0, 1, 2]], creases=[(0, 1, -1.0)])
    assert e.value.kind == "InvalidSharpness" and e.value.edge == (0, 1)
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh(x, [[0, 1, 2]], creases=[(0, 3, 1.0)])
    assert e.value.kind == "CreaseNotAnEdge"
    bad = x.copy()
    bad[3, 1] = math.nan
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh(bad, [[0, 1, 2]])
    assert (e.value.kind, e.value.vertex, e.value.channel) == ("NonFiniteCoordinate", 3, 1)
    with pytest.raises(subla.SchemeError) as e:
        subla.Plan(subla.shapes.cube(), "loop", 1)
    assert e.value.kind == "NotTriangles" and e.value.face == 0 and e.value.scheme == "loop"
    with pytest.raises(subla.RegistryError) as e:
        subla.Plan(subla.shapes.cube(), "doo-sabin", 1)
    assert e.value.kind == "UnknownScheme"
    with pytest.raises(subla.SchemeError) as e:
        subla.Plan(subla.shapes.cube(), "catmark", 12, max_memory=1 << 20)
    assert e.value.kind == "OverBudget" and e.value.budget == 1 << 20
    with pytest.raises(subla.RegistryError) as e:
        subla.FaceVaryingPlan(subla.shapes.octahedron(), "sqrt3", 1, indices=np.arange(24) % 6, num_values=6)
    assert e.value.kind == "NoFaceVarying"
    with pytest.raises(subla.SchemeError) as e:
        subla.Plan(subla.shapes.cube(), "catmark", 2).operator(2)
    assert e.value.kind == "NoSuchLevel"
    with pytest.raises(ValueError):
        subla.Plan(subla.shapes.cube(), "catmark", 1, path="fast")


def test_read_errors_name_the_line(tmp_path):
    p = tmp_path / "bad.obj"
    p.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 7\n")
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh.read(p)
    assert (e.value.kind, e.value.face, e.value.line) == ("IndexOutOfRange", 0, 4)
    with pytest.raises(subla.MeshError) as e:
        subla.Mesh.read(tmp_path / "missing.obj")
    assert e.value.kind == "Io"


def test_skipped_statements_warn(tmp_path):
    p = tmp_path / "mat.obj"
    p.write_text("mtllib a.mtl\nusemtl red\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    with pytest.warns(subla.DataLossWarning) as caught:
        subla.Mesh.read(p)
    said = " ".join(str(w.message) for w in caught)
    assert "mtllib" in said and "usemtl" in said


def test_published_shapes():
    for k in range(3, 9):
        b = subla.shapes.bipyramid(k)
        assert b.num_faces == 2 * k
        assert subla.Plan(b, "loop", 1).output_len == b.num_vertices + b.num_edges
    assert subla.shapes.dodecahedron().face_sizes.tolist() == [5] * 12
    t = subla.shapes.quad_torus(4, 3)
    assert (t.num_vertices, t.num_faces) == (12, 12)
    creased = subla.shapes.with_creases(subla.shapes.cube(), [(0, 1)], 2.0)
    assert len(creased.creases) == 1
    with pytest.raises(subla.MeshError) as e:
        subla.shapes.bipyramid(2)
    assert e.value.kind == "ShapeParameter"
