//! Refinement on the device against the CPU: the split kernel's child
//! cells are `VolMesh::split`'s, and the plan's matrices applied on the
//! device give the CPU's points within 1e-5 of the data's scale, with the
//! same bits every run.

use ndarray::Array2;
use subla_algebra::Par;
use subla_gpu::testing::context_or_skip;
use subla_scheme::{Refiner, eval};
use subla_solid::CatmarkSolid;
use subla_solid_gpu::{GpuSolidTopology, SolidRefineGpu, SolidSplitGpu, SolidTopologyArrays, split_cells};
use subla_volume::shapes::{examples, hex_grid};
use subla_volume::{Cell, VolumeData};

/// `rows × cols` values in `[-0.5, 0.5)` from a fixed generator.
fn random_columns(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut s = seed;
    Array2::from_shape_fn((rows, cols), |_| {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    })
}

/// A 3 × 3 × 2 grid with the edges between the vertex pairs `pairs`
/// sharp and the vertices `corners` corners.
fn tagged_grid(pairs: &[(u32, u32)], corners: &[u32]) -> VolumeData {
    let g = hex_grid(3, 3, 2).unwrap();
    let sharp: Vec<[u32; 2]> = (0..g.mesh.num_edges())
        .map(|e| g.mesh.edge(e))
        .filter(|&[a, b]| pairs.contains(&(a.min(b), a.max(b))))
        .collect();
    assert_eq!(sharp.len(), pairs.len(), "every pair an edge of the grid");
    let mesh = g.mesh.clone().with_features(&sharp, corners).unwrap();
    VolumeData { mesh, ..g }
}

fn shapes() -> Vec<(&'static str, VolumeData)> {
    let mut s = examples().unwrap();
    s.push(("grid", hex_grid(3, 2, 4).unwrap()));
    s
}

/// Every example shape (tetrahedra, wedges and polyhedra among the cells
/// of level 0) and a grid, over two splits.
#[test]
fn the_split_kernel_makes_the_cpu_cells() {
    let Some(ctx) = context_or_skip() else { return };
    for (name, d) in shapes() {
        let mut m = d.mesh;
        for level in 0..2 {
            let child = m.split(Par::Seq).unwrap();
            let want: Vec<[u32; 8]> = child
                .cells()
                .map(|c| match c {
                    Cell::Hexahedron(v) => v,
                    other => panic!("{name}: a split makes hexahedra, not {other:?}"),
                })
                .collect();
            let got = split_cells(ctx, &m).unwrap();
            assert_eq!(got, want, "{name}, level {level}");
            m = child;
        }
    }
}

/// The whole connectivity of two chained splits on the device (cells,
/// faces, face edges, face cells, edges, sharp flags) equals
/// `VolMesh::split`'s, numbering included, on every example shape, a grid
/// and a grid with sharp edges (boundary and interior); the same arrays
/// on every run.
#[test]
fn the_device_numbers_the_child_connectivity_as_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    let mut all = shapes();
    // One boundary edge and one interior edge of the grid, sharp.
    let tagged = tagged_grid(&[(0, 1), (21, 22)], &[]);
    assert_eq!(tagged.mesh.sharp_edges().count(), 2);
    all.push(("sharp grid", tagged));
    let splitter = SolidSplitGpu::new(ctx).unwrap();
    for (name, d) in all {
        let mut m = d.mesh;
        let mut gpu = GpuSolidTopology::upload(ctx, &m).unwrap();
        assert_eq!(gpu.download(ctx).unwrap(), SolidTopologyArrays::of(&m), "{name}: upload");
        for level in 1..=2 {
            m = m.split(Par::Seq).unwrap();
            let child = splitter.split(ctx, &gpu).unwrap();
            assert_eq!(
                (child.num_vertices(), child.num_edges(), child.num_faces(), child.num_cells()),
                (m.num_vertices(), m.num_edges(), m.num_faces(), m.num_cells()),
                "{name}, level {level}: counts"
            );
            let got = child.download(ctx).unwrap();
            let want = SolidTopologyArrays::of(&m);
            assert_eq!(got.cell_verts, want.cell_verts, "{name}, level {level}: cells");
            assert_eq!(got.cell_faces, want.cell_faces, "{name}, level {level}: cell faces");
            assert_eq!(got.face_verts, want.face_verts, "{name}, level {level}: faces");
            assert_eq!(got.face_cells, want.face_cells, "{name}, level {level}: face cells");
            assert_eq!(got.face_edges, want.face_edges, "{name}, level {level}: face edges");
            assert_eq!(got.edges, want.edges, "{name}, level {level}: edges");
            assert_eq!(got.sharp, want.sharp, "{name}, level {level}: sharp edges");
            assert_eq!(got, want, "{name}, level {level}: pointers");
            assert_eq!(splitter.split(ctx, &gpu).unwrap().download(ctx).unwrap(), got, "{name}, level {level}: again");
            gpu = child;
        }
    }
}

#[test]
fn the_device_refines_as_the_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    for (name, d) in shapes() {
        let levels = if name == "torus" { 1 } else { 2 };
        let plan = CatmarkSolid::default().build(&d.mesh, levels, Par::Rayon).unwrap();
        let mut gpu = SolidRefineGpu::new(ctx, &plan, 3).unwrap();
        // Positions, then four channels (the levels resized).
        let extra = random_columns(d.mesh.num_vertices(), 4, 5);
        for x in [d.vertices.clone(), extra] {
            let want = eval(&plan, x.view(), Par::Rayon).unwrap();
            let got = gpu.eval(ctx, x.mapv(|v| v as f32).view()).unwrap();
            assert_eq!(got.dim(), want.dim(), "{name}");
            assert_eq!(gpu.output_len(), want.nrows());
            let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
            let diff = got.iter().zip(want.iter()).fold(0f64, |a, (p, w)| a.max((f64::from(*p) - w).abs()));
            assert!(diff <= 1e-5 * scale, "{name}: {diff}");
            let again = gpu.eval(ctx, x.mapv(|v| v as f32).view()).unwrap();
            assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: bits");
        }
    }
}

/// A whole refinement on the device — each level's connectivity by the
/// split kernels, its points by `solid_points.wgsl` from that
/// connectivity, nothing built on the host — gives the CPU plan's points
/// within 1e-5 of the data's scale and the CPU's connectivity and tags, on
/// every example shape (tetrahedra, wedges and polyhedra at level 0,
/// boundaries, extraordinary and layered edges), a grid, and a grid with
/// sharp edges and corners; under both vertex rules; the same bits on
/// every run, and each channel the bits of its own one-channel run.
#[test]
fn the_device_computes_the_points_from_its_connectivity() {
    use subla_solid::VertexRule;
    use subla_solid_gpu::SolidRefineOnDevice;
    let Some(ctx) = context_or_skip() else { return };
    let mut all = shapes();
    // Two boundary edges and two interior edges in a row, sharp (crease
    // curves through vertex 1 on the boundary and vertex 22 inside), and
    // corners at vertices 0 and 15.
    all.push(("sharp grid", tagged_grid(&[(0, 1), (1, 2), (21, 22), (22, 23)], &[0, 15])));
    for rule in [VertexRule::Layered, VertexRule::JoyMacCracken] {
        let device = SolidRefineOnDevice::new(ctx, rule).unwrap();
        for (name, d) in &all {
            let levels = if *name == "torus" { 1 } else { 2 };
            let plan = CatmarkSolid::new(rule).build(&d.mesh, levels, Par::Rayon).unwrap();
            let extra = random_columns(d.mesh.num_vertices(), 5, 11);
            for x in [d.vertices.clone(), extra] {
                let want = eval(&plan, x.view(), Par::Rayon).unwrap();
                let (topo, got) = device.refine(ctx, &d.mesh, x.mapv(|v| v as f32).view(), levels).unwrap();
                assert_eq!(got.dim(), want.dim(), "{name}, {rule:?}");
                let scale = x.iter().fold(1f64, |a, v| a.max(v.abs()));
                let (mut worst, mut at) = (0f64, 0);
                for (i, (p, w)) in got.iter().zip(want.iter()).enumerate() {
                    let diff = (f64::from(*p) - w).abs();
                    if diff > worst {
                        (worst, at) = (diff, i / x.ncols());
                    }
                }
                assert!(worst <= 1e-5 * scale, "{name}, {rule:?}: {worst} at row {at}");
                let finest = plan.mesh(levels);
                assert_eq!(topo.download(ctx).unwrap(), SolidTopologyArrays::of(finest), "{name}: connectivity");
                let (_, again) = device.refine(ctx, &d.mesh, x.mapv(|v| v as f32).view(), levels).unwrap();
                assert!(got.iter().zip(again.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: bits");
                // Four channels at a time: each channel as its own run gives,
                // bit for bit.
                let last = x.ncols() - 1;
                let alone = x.slice(ndarray::s![.., last..]).mapv(|v| v as f32);
                let (_, one) = device.refine(ctx, &d.mesh, alone.view(), levels).unwrap();
                let col = got.column(last);
                assert!(col.iter().zip(one.iter()).all(|(a, b)| a.to_bits() == b.to_bits()), "{name}: channel {last}");
            }
        }
    }
}
