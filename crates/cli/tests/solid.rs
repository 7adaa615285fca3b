//! `subla solid` as a user runs it: `info` on the example meshes,
//! `subdivide` to VTK (ASCII and binary) and Medit with the boundary
//! surface, and a build over the memory budget refused before any work.

use std::path::PathBuf;
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/solids").join(name)
}

fn subla(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_subla")).args(args).output().expect("run subla")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn info_counts_cells_and_extraordinary_edges() {
    let o = subla(&["solid", "info", data("block_ee3_ee5.vtk").to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cells"], 16);
    assert_eq!(v["cell_kinds"]["hexahedron"], 16);
    let ee = v["extraordinary_edges"].as_array().unwrap();
    let inside: Vec<(u64, u64)> = ee
        .iter()
        .filter(|e| e["boundary"] == false)
        .map(|e| (e["valence"].as_u64().unwrap(), e["edges"].as_u64().unwrap()))
        .collect();
    assert_eq!(inside, vec![(3, 2), (5, 2)]);
    let classes = v["cell_classes"].as_array().unwrap();
    assert_eq!(classes.iter().map(|c| c["cells"].as_u64().unwrap()).sum::<u64>(), 16);
    assert!(classes.iter().all(|c| c["evaluated"] == false), "{classes:?}");
}

#[test]
fn subdivide_writes_vtk_medit_and_the_surface() {
    let dir = tempdir();
    let input = data("cylinder.vtk");
    for (out, extra) in [("c.vtk", None), ("c_bin.vtk", Some("--binary")), ("c.mesh", None)] {
        let out = dir.join(out);
        let surf = dir.join("c.obj");
        let mut args = vec![
            "solid",
            "subdivide",
            input.to_str().unwrap(),
            "--levels",
            "2",
            "-o",
            out.to_str().unwrap(),
            "--surface",
            surf.to_str().unwrap(),
            "--quiet",
        ];
        args.extend(extra);
        let o = subla(&args);
        assert!(o.status.success(), "{}", text(&o));
        let back = subla(&["solid", "info", out.to_str().unwrap(), "--json"]);
        assert!(back.status.success(), "{}", text(&back));
        let v: serde_json::Value = serde_json::from_slice(&back.stdout).unwrap();
        assert_eq!(v["cells"], 80 * 64, "{}", out.display());
        let obj = std::fs::read_to_string(&surf).unwrap();
        assert_eq!(obj.lines().filter(|l| l.starts_with("f ")).count() as u64, v["boundary_faces"].as_u64().unwrap());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_build_over_the_budget_is_refused_before_work() {
    let dir = tempdir();
    let o = subla(&[
        "solid",
        "subdivide",
        data("torus.vtk").to_str().unwrap(),
        "--levels",
        "6",
        "-o",
        dir.join("t.vtk").to_str().unwrap(),
        "--max-memory",
        "64M",
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("cells") && t.contains("--max-memory"), "{t}");
    assert!(!dir.join("t.vtk").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_mesh_is_named() {
    let dir = tempdir();
    let bad = dir.join("pyramid.vtk");
    std::fs::write(
        &bad,
        "# vtk DataFile Version 3.0\nbad\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 5 double\n0 0 0 1 0 0 1 1 0 0 1 0 0.5 0.5 1\nCELLS 1 6\n5 0 1 2 3 4\nCELL_TYPES 1\n14\n",
    )
    .unwrap();
    let o = subla(&["solid", "info", bad.to_str().unwrap()]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("cell 0") && t.contains("pyramid"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "subla-solid-cli-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn limit_writes_every_sample_or_names_the_cell_it_cannot_evaluate() {
    let dir = tempdir();
    let out = dir.join("l.txt");
    // The coarse torus: no cell is evaluated as it is (its ring meets the
    // core's extraordinary edges at a vertex), and the first is named.
    let torus = data("torus.vtk");
    let o = subla(&["solid", "limit", torus.to_str().unwrap(), "--grid", "2", "-o", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).contains("cell 0 is not evaluated yet"), "{}", text(&o));
    // Every cell of the cylinder is evaluated: regular at a boundary face,
    // layered (at its core's extraordinary edges), and at its rims, the
    // untagged boundary edges where the caps meet the side.
    let cyl = data("cylinder.vtk");
    let o = subla(&[
        "solid",
        "limit",
        cyl.to_str().unwrap(),
        "--grid",
        "2",
        "--cells",
        "evaluated",
        "--derivatives",
        "-o",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("not evaluated"), "{}", text(&o));
    let lines = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<Vec<f64>> = lines
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 80 * 8);
    assert!(rows.iter().all(|r| r.len() == 16 && r.iter().all(|x| x.is_finite())));
    // Cell 0 is layered: its samples are inside the cylinder (radius 1).
    assert!(rows.iter().filter(|r| r[0] == 0.0).all(|r| r[4].hypot(r[5]) < 1.0));
    let o = subla(&[
        "solid",
        "limit",
        cyl.to_str().unwrap(),
        "--grid",
        "2",
        "--cells",
        "regular",
        "--derivatives",
        "-o",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("64 of 80 cells are not regular"), "{}", text(&o));
    let lines: Vec<String> = std::fs::read_to_string(&out).unwrap().lines().map(str::to_owned).collect();
    let data_lines: Vec<&String> = lines.iter().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(data_lines.len(), 16 * 8);
    assert!(data_lines.iter().all(|l| l.split_whitespace().count() == 16));
    // Samples run w outer, then v, then u.
    let uvw: Vec<f64> = data_lines[1].split_whitespace().skip(1).take(3).map(|t| t.parse().unwrap()).collect();
    assert_eq!(uvw, vec![1.0, 0.0, 0.0]);
    // A grid: every cell in the middle of a side or inside is evaluated.
    let grid = dir.join("grid.vtk");
    let g = subla_volume::shapes::hex_grid(4, 4, 4).unwrap();
    subla_volume::vtk::write_vtk_file(&g, &grid, subla_volume::vtk::VtkEncoding::Binary).unwrap();
    let o = subla(&[
        "solid",
        "limit",
        grid.to_str().unwrap(),
        "--grid",
        "3",
        "--cells",
        "regular",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let n = std::fs::read_to_string(&out).unwrap().lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(n, (8 + 24) * 27);
    // As a VTK point cloud: one vertex cell per sample.
    let vtk = dir.join("l.vtk");
    let o = subla(&[
        "solid",
        "limit",
        grid.to_str().unwrap(),
        "--grid",
        "2",
        "--cells",
        "regular",
        "--derivatives",
        "-o",
        vtk.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&vtk).unwrap();
    let head = String::from_utf8_lossy(&bytes[..120]);
    assert!(head.contains("POINTS 256 double"), "{head}");
    let tail = String::from_utf8_lossy(&bytes);
    assert!(
        tail.contains("CELL_TYPES 256") && tail.contains("VECTORS d_dw double"),
        "the vertex cells and the derivatives"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tetrahedron split into hexahedra, refined twice: its four irregular
/// cells at the centre are sampled, positions everywhere, derivatives not
/// at their extraordinary vertex (a corner of the grid).
#[test]
fn limit_samples_irregular_cells() {
    let dir = tempdir();
    let (input, out) = (dir.join("t2.vtk"), dir.join("t.txt"));
    let o = subla(&[
        "solid",
        "subdivide",
        data("tetra_split.vtk").to_str().unwrap(),
        "--levels",
        "2",
        "-o",
        input.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let run = |derivatives: bool| {
        let mut args = vec!["solid", "limit", input.to_str().unwrap(), "--grid", "2", "--cells", "evaluated"];
        if derivatives {
            args.push("--derivatives");
        }
        args.extend(["-o", out.to_str().unwrap(), "--quiet"]);
        let o = subla(&args);
        assert!(o.status.success(), "{}", text(&o));
        let rows = std::fs::read_to_string(&out).unwrap().lines().filter(|l| !l.starts_with('#')).count();
        (rows, text(&o))
    };
    // 256 cells, all evaluated: 8 irregular, 4 at the centre and 4 at the
    // tetrahedron's corners (three untagged boundary edges meet there).
    let (rows, warn) = run(false);
    assert_eq!(rows, 256 * 8, "{warn}");
    assert!(!warn.contains("not evaluated"), "{warn}");
    let (rows, warn) = run(true);
    assert_eq!(rows, 248 * 8, "{warn}");
    assert!(warn.contains("8 of 256 cells"), "{warn}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn limit_refines_cells_first_where_asked() {
    let dir = tempdir();
    let out = dir.join("torus.txt");
    let torus = data("torus.vtk");
    let run = |extra: &[&str]| {
        let mut args = vec!["solid", "limit", torus.to_str().unwrap(), "--grid", "2", "-o", out.to_str().unwrap()];
        args.extend(extra);
        subla(&args)
    };
    // No cell of the coarse torus is evaluated as it is.
    let o = run(&[]);
    assert!(!o.status.success() && text(&o).contains("cell 0 is not evaluated yet"), "{}", text(&o));
    let o = run(&["--cells", "evaluated"]);
    assert!(text(&o).contains("192 of 192 cells") && text(&o).contains("--refine"), "{}", text(&o));
    // One step makes every child evaluated: all 192 cells, 8 samples each,
    // positions and derivatives.
    let o = run(&["--refine", "1", "--derivatives"]);
    assert!(o.status.success(), "{}", text(&o));
    let rows: Vec<Vec<f64>> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 192 * 8);
    assert!(rows.iter().all(|r| r.len() == 16 && r.iter().all(|x| x.is_finite())));
    // A 4³ box with one lattice edge at a corner sharp (a Medit ridge): the
    // two cells at its ends (the corner cell, irregular untagged, and its
    // neighbour) have the sharp edge at their own vertices, and so have
    // their children at the edge however far they are refined; every other
    // cell is sampled.
    let tagged = dir.join("box.mesh");
    let mut g = subla_volume::shapes::hex_grid(4, 4, 4).unwrap();
    g.mesh = g.mesh.with_features(&[[0, 1]], &[]).unwrap();
    subla_volume::medit::write_medit_file(&g, &tagged).unwrap();
    let o = subla(&[
        "solid",
        "limit",
        tagged.to_str().unwrap(),
        "--grid",
        "2",
        "--refine",
        "2",
        "--cells",
        "evaluated",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2 of 64 cells are not evaluated yet"), "{}", text(&o));
    let o = subla(&["solid", "limit", tagged.to_str().unwrap(), "--refine", "2", "-o", out.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o).contains("cell 0 is not evaluated yet"), "{}", text(&o));
    // The refinement's size is predicted and refused over the budget.
    let o = run(&["--refine", "3", "--max-memory", "64K"]);
    assert!(!o.status.success() && text(&o).contains("refining 3 levels would make 98304 cells"), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn subdivide_renders_the_boundary_surface() {
    let dir = tempdir();
    let (out, png) = (dir.join("t.vtk"), dir.join("t.png"));
    let torus = data("torus.vtk");
    let o = subla(&[
        "solid",
        "subdivide",
        torus.to_str().unwrap(),
        "--levels",
        "1",
        "-o",
        out.to_str().unwrap(),
        "--png",
        png.to_str().unwrap(),
    ]);
    if !o.status.success()
        && std::env::var("SUBLA_REQUIRE_GPU").as_deref() != Ok("1")
        && text(&o).contains("GPU adapter")
    {
        eprintln!("skipped: no GPU adapter to render with");
        return;
    }
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `subla solid subdivide IN --levels N -o OUT --quiet`, which must
/// succeed.
fn subdivide(input: &std::path::Path, levels: u32, output: &std::path::Path) -> Output {
    let levels = levels.to_string();
    let o = subla(&[
        "solid",
        "subdivide",
        input.to_str().unwrap(),
        "--levels",
        &levels,
        "-o",
        output.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    o
}

#[test]
fn sharp_edges_and_corners_go_through_medit_files() {
    let dir = tempdir();
    // A 2 × 2 × 2 block of cubes with its twelve outline edges (24 lattice
    // edges) as ridges, so that it stays a box with sharp edges, and one of
    // its corners tagged as well.
    let id = |i: usize, j: usize, k: usize| 1 + i + 3 * j + 9 * k;
    let mut text_in = String::from("MeshVersionFormatted 2\nDimension 3\nVertices 27\n");
    for k in 0..3 {
        for j in 0..3 {
            for i in 0..3 {
                text_in += &format!("{i} {j} {k} 0\n");
            }
        }
    }
    text_in += "Hexahedra 8\n";
    for k in 0..2 {
        for j in 0..2 {
            for i in 0..2 {
                let (a, b, c, d) = (id(i, j, k), id(i + 1, j, k), id(i + 1, j + 1, k), id(i, j + 1, k));
                text_in += &format!("{a} {b} {c} {d} {} {} {} {} 0\n", a + 9, b + 9, c + 9, d + 9);
            }
        }
    }
    let mut ridges = Vec::new();
    for t in 0..2 {
        for (a, b) in [(0, 0), (2, 0), (0, 2), (2, 2)] {
            ridges.push((id(t, a, b), id(t + 1, a, b)));
            ridges.push((id(a, t, b), id(a, t + 1, b)));
            ridges.push((id(a, b, t), id(a, b, t + 1)));
        }
    }
    text_in += &format!("Edges {}\n", ridges.len());
    for (a, b) in &ridges {
        text_in += &format!("{a} {b} 0\n");
    }
    text_in += &format!("Ridges {}\n", ridges.len());
    for k in 1..=ridges.len() {
        text_in += &format!("{k}\n");
    }
    text_in += "Corners 1\n1\nEnd\n";
    let input = dir.join("box.mesh");
    std::fs::write(&input, text_in).unwrap();
    let counts = |path: &std::path::Path| -> (u64, u64) {
        let o = subla(&["solid", "info", path.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (v["sharp_edges"].as_u64().unwrap(), v["corners"].as_u64().unwrap())
    };
    assert_eq!(counts(&input), (24, 1));
    let info = subla(&["solid", "info", input.to_str().unwrap()]);
    assert!(text(&info).contains("sharp edges 24, corners 1"), "{}", text(&info));
    // Every cell is at three sharp boundary edges, so evaluated: a
    // tricubic patch with a phantom layer beyond each boundary face. The
    // box's corners (fixed by the crease rules) are their limits.
    let o = subla(&["solid", "info", input.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let classes = v["cell_classes"].as_array().unwrap();
    assert_eq!(classes.len(), 1, "{classes:?}");
    assert_eq!(classes[0]["class"], "regular at sharp boundary edges");
    assert_eq!((classes[0]["cells"].as_u64(), classes[0]["evaluated"].as_bool()), (Some(8), Some(true)));
    let samples = dir.join("box.txt");
    let o = subla(&["solid", "limit", input.to_str().unwrap(), "--grid", "2", "-o", samples.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let lines: Vec<Vec<f64>> = std::fs::read_to_string(&samples)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), 8 * 8);
    // Cell 0's sample at (0, 0, 0) is the box's corner.
    assert_eq!(&lines[0][..4], &[0.0; 4]);
    assert!(lines[0][4..7].iter().all(|x| x.abs() < 1e-12), "{:?}", lines[0]);
    let refined = dir.join("box2.mesh");
    subdivide(&input, 2, &refined);
    // Each sharp edge in four after two steps; the corner kept.
    assert_eq!(counts(&refined), (96, 1));
    let vtk = dir.join("box1.vtk");
    let o = subdivide(&input, 1, &vtk);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning") && err.contains("sharp edges and corners (48 and 1)"), "{err}");
    assert_eq!(counts(&vtk), (0, 0));
    // One cube with three ridges at a corner: the spike the corner pulls
    // folds a cell next to it at the second step. Written, and said.
    let cube = dir.join("cube.mesh");
    std::fs::write(
        &cube,
        "MeshVersionFormatted 2\nDimension 3\nVertices 8\n0 0 0 0\n1 0 0 0\n1 1 0 0\n0 1 0 0\n\
         0 0 1 0\n1 0 1 0\n1 1 1 0\n0 1 1 0\nHexahedra 1\n1 2 3 4 5 6 7 8 0\n\
         Edges 3\n1 2 0\n1 4 0\n1 5 0\nRidges 3\n1 2 3\nEnd\n",
    )
    .unwrap();
    let folded = dir.join("cube2.mesh");
    let o = subdivide(&cube, 2, &folded);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("do not all pass the geometry check") && err.contains("inverted"), "{err}");
    assert!(folded.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--backend gpu`: each level's connectivity and points made on the
/// device from the level before. The written mesh has the CPU's cells and,
/// within `f32` rounding, its points, on the layered block, the split
/// tetrahedron and the cylinder (boundary) over two levels. Without a
/// usable adapter: an error that names the fallback; with `--fallback
/// cpu`, a warning and the CPU's file.
#[test]
fn subdivide_on_the_device_writes_the_cpus_mesh() {
    let dir = tempdir();
    let (cpu, gpu) = (dir.join("cpu.vtk"), dir.join("gpu.vtk"));
    let run = |input: &std::path::Path, out: &std::path::Path, extra: &[&str], adapter: Option<&str>| {
        let mut args = vec![
            "solid",
            "subdivide",
            input.to_str().unwrap(),
            "--levels",
            "2",
            "-o",
            out.to_str().unwrap(),
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let mut c = Command::new(env!("CARGO_BIN_EXE_subla"));
        c.args(&args);
        if let Some(a) = adapter {
            c.env("SUBLA_GPU_ADAPTER", a);
        }
        c.output().expect("run subla")
    };
    for name in ["block_ee3_ee5.vtk", "tetra_split.vtk", "cylinder.vtk"] {
        let input = data(name);
        let o = run(&input, &cpu, &[], None);
        assert!(o.status.success(), "{}", text(&o));
        let o = run(&input, &gpu, &["--backend", "gpu"], None);
        if !o.status.success() && std::env::var("SUBLA_REQUIRE_GPU").as_deref() != Ok("1") {
            eprintln!("skipped: no GPU adapter ({})", text(&o));
            return;
        }
        assert!(o.status.success(), "{name}: {}", text(&o));
        let (a, b) = (subla_volume::vtk::read_vtk_file(&cpu).unwrap(), subla_volume::vtk::read_vtk_file(&gpu).unwrap());
        assert!(a.mesh.cells().eq(b.mesh.cells()), "{name}: cells");
        let scale = a.vertices.iter().fold(1f64, |m, v| m.max(v.abs()));
        let diff = a.vertices.iter().zip(b.vertices.iter()).fold(0f64, |m, (p, q)| m.max((p - q).abs()));
        assert_eq!(a.vertices.dim(), b.vertices.dim(), "{name}");
        assert!(diff > 0.0 && diff <= 1e-5 * scale, "{name}: {diff} (f32 on the device, f64 on the CPU)");
    }
    let input = data("block_ee3_ee5.vtk");
    let _ = std::fs::remove_file(&gpu);
    let nowhere = Some("no adapter has this name");
    let o = run(&input, &gpu, &["--backend", "gpu"], nowhere);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--backend gpu:") && text(&o).contains("--fallback cpu"), "{}", text(&o));
    assert!(!gpu.exists(), "nothing written");
    let o = run(&input, &gpu, &["--backend", "gpu", "--fallback", "cpu"], nowhere);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("warning: --backend gpu:") && text(&o).contains("refined on the CPU"), "{}", text(&o));
    let o = run(&input, &cpu, &[], None);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&gpu).unwrap(), std::fs::read(&cpu).unwrap(), "the CPU's file");
    let _ = std::fs::remove_dir_all(&dir);
}
