"""The limit surface and the local subdivision analysis from Python."""

import math

import numpy as np
import pytest

import subla
from conftest import read_mesh, read_text


def golden_limit(path):
    rows = [list(map(float, line.split())) for line in read_text(path).splitlines() if not line.startswith("#")]
    header = read_text(path).splitlines()[0]
    k = int(header.split("grid=")[1].split()[0])
    return np.array(rows), k


@pytest.mark.parametrize(
    "name, scheme, iso, endcap",
    [
        ("catmark_cube", "catmark", 2, "bspline"),
        ("catmark_gregory_test0", "catmark", 3, "gregory"),
        ("loop_cube", "loop", 3, "gregory"),
    ],
)
def test_limit_matches_opensubdiv(data, name, scheme, iso, endcap):
    mesh = read_mesh(data / "meshes" / "osd" / f"{name}.obj")
    g, k = golden_limit(data / "golden" / "limit" / f"{name}.iso{iso}.{endcap}.txt.gz")
    surface = subla.LimitSurface(mesh, scheme, iso, endcap=endcap)
    ptex, u, v = surface.grid(k)
    assert len(ptex) == len(g)
    assert np.array_equal(np.array(ptex), g[:, 0])
    pos, du, dv = surface.evaluate(mesh.positions, ptex, u, v)
    scale = max(1.0, np.abs(g[:, 3:6]).max())
    assert np.abs(pos - g[:, 3:6]).max() < 1e-5 * scale
    assert np.abs(du - g[:, 6:9]).max() < 1e-4 * scale
    assert np.abs(dv - g[:, 9:12]).max() < 1e-4 * scale
    # The same map as matrices over the control points.
    p, mu, mv = surface.matrices(ptex, u, v)
    assert p.shape == (len(ptex), mesh.num_vertices)
    assert np.abs(p @ mesh.positions - pos).max() < 1e-12 * scale
    assert np.abs(mu @ mesh.positions - du).max() < 1e-12 * scale
    assert np.abs(mv @ mesh.positions - dv).max() < 1e-12 * scale
    # float32 control points evaluate in float32.
    p32, _, _ = surface.evaluate(mesh.positions.astype(np.float32), ptex, u, v)
    assert p32.dtype == np.float32


def test_limit_errors():
    mesh = subla.shapes.cube()
    with pytest.raises(subla.AdaptiveError) as e:
        subla.LimitSurface(mesh, "catmark", 11)
    assert (e.value.kind, e.value.level) == ("IsolationLevel", 11)
    surface = subla.LimitSurface(mesh, "catmark", 2)
    with pytest.raises(subla.AdaptiveError) as e:
        surface.evaluate(mesh.vertices, [6], [0.5], [0.5])
    assert (e.value.kind, e.value.ptex) == ("NoSuchPtexFace", 6)
    with pytest.raises(ValueError):
        surface.evaluate(mesh.vertices, [0, 1], [0.5], [0.5])
    with pytest.raises(ValueError):
        surface.evaluate(mesh.vertices, [0], [1.5], [0.5])


@pytest.mark.parametrize("k", range(3, 11))
def test_loop_subdominant_eigenvalue(k):
    s = subla.analysis.local_subdivision_matrix("loop", k)
    assert s.matrix.shape == (k + 1, k + 1)
    assert s.points[0] == (0, 0, 0)
    assert s.is_block_circulant()
    sp = s.spectrum()
    assert abs(sp.values[0] - 1) < 1e-12
    assert abs(sp.subdominant.real - (3 / 8 + math.cos(2 * math.pi / k) / 4)) < 1e-12
    assert sp.conditions["all"]
    assert sp.fourier[1] in (1, k - 1)
    # The limit mask from the left eigenvector is the scheme's own.
    assert np.abs(s.limit_mask() - s.scheme_limit_mask).max() < 1e-12
    assert abs(s.limit_mask().sum() - 1) < 1e-12
    # One Fourier block per frequency; their eigenvalues are the matrix's.
    blocks = s.fourier_blocks()
    assert len(blocks) == k
    ev = np.sort_complex(np.concatenate([np.linalg.eigvals(b) for b in blocks]))
    assert np.abs(ev - np.sort_complex(np.linalg.eigvals(s.dense()))).max() < 1e-10


@pytest.mark.parametrize("k", [3, 5, 6, 8])
def test_catmark_subdominant_eigenvalue(k):
    s = subla.analysis.local_subdivision_matrix("catmark", k)
    sp = s.spectrum()
    c = math.cos(2 * math.pi / k)
    # Catmull-Clark's subdominant eigenvalue (Stam 1998; Peters & Reif).
    lam = (c + 5 + math.sqrt((c + 9) * (c + 1))) / 16
    assert abs(sp.subdominant.real - lam) < 1e-12
    assert sp.conditions["all"]
    left = s.left_eigenvectors(lam)
    right = s.right_eigenvectors(lam)
    assert left.shape[0] == 2 and right.shape[0] == 2
    a = s.dense()
    assert np.abs(left @ a - lam * left).max() < 1e-10
    assert np.abs(a @ right.T - lam * right.T).max() < 1e-10
    t0, t1 = s.tangent_masks()
    assert abs(t0.sum()) < 1e-10 and abs(t1.sum()) < 1e-10


def test_characteristic_map_and_report():
    m = subla.analysis.characteristic_map("catmark", 5)
    assert m["regular"] and m["injective"]
    assert m["points"].shape[1] == 2 and m["triangles"].shape[1] == 3
    reports = subla.analysis.analyze("loop", [3, 4, 7])
    assert [r["valence"] for r in reports] == [3, 4, 7]
    assert all(r["conditions"]["all"] for r in reports)
    assert all(r["characteristic_map"]["regular"] and r["characteristic_map"]["injective"] for r in reports)


def test_boundary_configuration():
    s = subla.analysis.local_subdivision_matrix("catmark", 2, configuration="boundary")
    assert s.configuration == "boundary"
    assert not s.is_block_circulant()
    sp = s.spectrum()
    assert sp.configuration == "boundary"
    assert sp.conditions["unit_dominant"]
    # The boundary curve's limit mask is the cubic B-spline's (1/6, 2/3, 1/6).
    mask = s.limit_mask()
    pts = s.points
    on_curve = {p: w for p, w in zip(pts, mask) if abs(w) > 1e-12}
    assert abs(on_curve[(0, 0, 0)] - 2 / 3) < 1e-12
    assert sorted(round(w, 12) for p, w in on_curve.items() if p != (0, 0, 0)) == [round(1 / 6, 12)] * 2


@pytest.mark.parametrize("scheme, k", [("catmark", 4), ("catmark", 5), ("loop", 6), ("loop", 7)])
def test_crease_and_corner_configurations(scheme, k):
    s = subla.analysis.local_subdivision_matrix(scheme, k, configuration="crease")
    assert (s.configuration, s.across) == ("crease", k // 2)
    mask = s.limit_mask()
    # The crease is a cubic B-spline curve: (1/6, 2/3, 1/6) on the centre and
    # the two crease spokes (points 1 and 1 + across).
    want = np.zeros(len(mask))
    want[[0, 1, 1 + k // 2]] = [2 / 3, 1 / 6, 1 / 6]
    assert np.abs(mask - want).max() < 1e-10
    assert np.abs(mask - s.scheme_limit_mask).max() < 1e-10
    corner = subla.analysis.local_subdivision_matrix(scheme, 2, configuration="corner")
    assert abs(corner.limit_mask()[0] - 1) < 1e-10
    reports = subla.analysis.analyze(scheme, [k], configuration="dart")
    assert reports[0]["conditions"]["unit_dominant"] and reports[0]["characteristic_map"] is None


@pytest.mark.parametrize("k", [3, 4, 5, 6])
def test_solid_edge_configuration(k):
    s = subla.analysis.edge_subdivision_matrix(k)
    assert s.configuration == "edge"
    assert s.matrix.shape == (3 * (2 * k + 1),) * 2
    assert s.layers[:3] == [0, -1, 1]
    assert np.allclose(np.asarray(s.matrix.sum(axis=1)).ravel(), 1.0)
    assert s.is_block_circulant()
    sp = s.spectrum()
    cc = subla.analysis.local_subdivision_matrix("catmark", k).spectrum().subdominant.real
    assert abs(sp.values[0] - 1) < 1e-12
    assert abs(sp.values[1].real - max(cc, 0.5)) < 1e-9
    ev = np.sort_complex(np.linalg.eigvals(s.dense()))
    assert np.abs(ev - np.sort_complex(sp.values)).max() < 1e-7
    # The default (layered) vertex rule makes the whole matrix the tensor
    # product; Joy and MacCracken's differs at the edge's vertices (k != 4).
    jm = subla.analysis.edge_subdivision_matrix(k, vertex_rule="joy-maccracken")
    assert (np.abs(jm.dense() - s.dense()).max() > 1e-3) == (k != 4)
    with pytest.raises(ValueError):
        subla.analysis.edge_subdivision_matrix(k, vertex_rule="bajaj")


def test_boundary_characteristic_maps():
    m = subla.analysis.characteristic_map("catmark", 2, configuration="boundary")
    assert m["regular"] and m["injective"] and abs(m["lambda"] - 0.5) < 1e-9
    assert not subla.analysis.characteristic_map("catmark", 5, configuration="boundary")["regular"]
    with pytest.raises(subla.AnalysisError) as e:
        subla.analysis.characteristic_map("loop", 6, configuration="boundary")
    assert e.value.kind == "NoBoundaryPair"
    reports = subla.analysis.analyze("loop", [3], configuration="boundary")
    assert reports[0]["characteristic_map"]["injective"]


def test_analysis_errors():
    with pytest.raises(subla.AnalysisError) as e:
        subla.analysis.local_subdivision_matrix("loop", 2)
    assert e.value.kind == "Parameter"
    with pytest.raises(subla.AnalysisError) as e:
        subla.analysis.local_subdivision_matrix("catmark", 5, configuration="face")
    assert e.value.kind == "MissingPoint"
    # sqrt(3) over two steps: 1/3 at the regular valence, no characteristic map.
    s = subla.analysis.local_subdivision_matrix("sqrt3", 6)
    assert s.steps == 2 and abs(s.spectrum().subdominant.real - 1 / 3) < 1e-12
    with pytest.raises(subla.AnalysisError) as e:
        subla.analysis.characteristic_map("sqrt3", 6)
    assert e.value.kind == "UnsupportedConfiguration"
    with pytest.raises(ValueError):
        subla.analysis.local_subdivision_matrix("loop", 6, configuration="sharp")
    with pytest.raises(ValueError):
        subla.analysis.local_subdivision_matrix("loop", 6, across=2)
    with pytest.raises(subla.AnalysisError) as e:
        subla.analysis.local_subdivision_matrix("loop", 6, configuration="crease", across=6)
    assert e.value.kind == "Parameter"
