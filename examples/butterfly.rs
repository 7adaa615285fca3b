//! The modified Butterfly scheme (Zorin, Schröder & Sweldens 1996), written
//! as a user of subla would: a scheme the library does not ship, behind the
//! same [`Refiner`] contract through the generic [`OperatorPlan`], its rows
//! from subla's public opposite-vertex matrix, its refinement matrix
//! exportable and its spectrum checked with `subla::analysis`.
//!
//! Butterfly is *interpolating*: each triangle splits 1-to-4 as in Loop
//! (the mesh crate's `Topology::split_triangles`), the old vertices stay,
//! and each edge `a → b` gets a new point:
//!
//! * both ends of valence 6, the eight-point stencil
//!   `½(a + b) + ⅛(c + d) − 1/16 (e + f + g + h)`, with `c`, `d` the vertices
//!   opposite the edge and `e … h` the vertices opposite the four edges of
//!   its two triangles — with `G(i, j)`, the vertex opposite the directed
//!   edge `i → j` (`subla::mesh::matrices::opposite_vertices`, Eq. 30):
//!   `c = G(a, b)`, `d = G(b, a)`, and the wings `G(a, c)`, `G(c, b)`,
//!   `G(d, a)`, `G(b, d)`;
//! * one end `v` of valence `k ≠ 6`, Zorin's stencil of `v`: `¾ v + Σ_j
//!   s_j n_j` over `v`'s neighbours in turning order from the other end
//!   (`n_0`), `s_j = (¼ + cos(2πj/k) + ½ cos(4πj/k)) / k` for `k ≥ 5`,
//!   `(5/12, −1/12, −1/12)` for `k = 3`, `(3/8, 0, −1/8, 0)` for `k = 4`;
//! * both ends extraordinary, the average of the two stencils.
//!
//! Manifold triangle meshes: a non-manifold vertex and a face that is not a
//! triangle are refused naming it. Zorin's boundary rules are not written
//! here: an edge with an end on the boundary gets its midpoint (the rows
//! near a boundary are linear), which leaves the rules around interior
//! vertices — what the analysis of an extraordinary vertex reads — intact.
//! Sharpness tags are ignored.
//!
//! Run with `cargo run --release --example butterfly [-- OUT_DIR]`: it
//! subdivides an icosahedron two levels, prints the spectrum of the local
//! subdivision matrix at valences 3–8 (`1, ½, ½, ¼` away from 6), and
//! with `OUT_DIR` writes the refined mesh (`butterfly_L2.obj`) and the
//! composed refinement matrix (`R.mtx`, Matrix Market) there.

use std::f64::consts::TAU;
use std::path::Path;

use subla::algebra::{CsrMat, Par, mtx};
use subla::analysis::{DiskFaces, local_subdivision_matrix, spectrum};
use subla::mesh::topology::VertexRing;
use subla::mesh::{Mesh, MeshData, matrices, obj, shapes};
use subla::scheme::refinement::{Budget, Refinement};
use subla::scheme::{ChildPoint, OperatorPlan, OperatorRefiner, OperatorRules, Plan, Refined, Refiner, SchemeError};

const NAME: &str = "butterfly";

/// What the Butterfly rules refuse, naming the element: the scheme's own
/// error type, carried by [`SchemeError::Scheme`].
#[derive(Debug, thiserror::Error)]
pub enum ButterflyError {
    /// A boundary edge (no boundary rules here).
    #[error("edge ({a}, {b}) is on the boundary: this Butterfly takes closed meshes only")]
    Boundary {
        /// One end.
        a: u32,
        /// The other.
        b: u32,
    },
    /// The faces around a vertex do not form one closed fan.
    #[error("the faces around vertex {vertex} do not form one closed fan")]
    NotManifold {
        /// The vertex.
        vertex: usize,
    },
}

/// Zorin's weights `s_j` of a vertex of valence `k ≠ 6` (its centre weight
/// is ¾).
pub fn stencil(k: usize) -> Vec<f64> {
    match k {
        3 => vec![5.0 / 12.0, -1.0 / 12.0, -1.0 / 12.0],
        4 => vec![3.0 / 8.0, 0.0, -1.0 / 8.0, 0.0],
        _ => (0..k)
            .map(|j| {
                let t = TAU * j as f64 / k as f64;
                (0.25 + t.cos() + 0.5 * (2.0 * t).cos()) / k as f64
            })
            .collect(),
    }
}

/// One Butterfly level: the refinement matrix `R` (parent vertices, then
/// one row per parent edge) and the child mesh.
///
/// # Errors
/// [`SchemeError::NotTriangles`] or the mesh crate's errors for faces that
/// are not triangles; [`ButterflyError`] for boundaries and non-manifold
/// vertices.
pub fn refine(parent: &Mesh, par: Par) -> Result<Refined, SchemeError> {
    let t = parent.topology();
    let (nv, ne) = (t.num_vertices(), t.num_edges());
    let g = matrices::opposite_vertices(t, par)?;
    let opp = |i: u32, j: u32| -> Result<u32, SchemeError> {
        g.as_ref()
            .get(i as usize, j as usize)
            .copied()
            .ok_or_else(|| SchemeError::scheme(NAME, ButterflyError::Boundary { a: i, b: j }))
    };
    // Every interior vertex's ring, in turning order (`None` on the
    // boundary).
    let rings: Vec<Option<Vec<u32>>> = (0..nv)
        .map(|v| match VertexRing::of(t, v) {
            Some(r) => Ok((!r.boundary).then(|| r.neighbours(t, v))),
            None => Err(SchemeError::scheme(NAME, ButterflyError::NotManifold { vertex: v })),
        })
        .collect::<Result<_, _>>()?;
    // `v`'s stencil for its edge to `other`: (vertex, weight) pairs.
    let extraordinary = |v: u32, other: u32, out: &mut Vec<(u32, f64)>, scale: f64| {
        let ring = rings[v as usize].as_deref().unwrap_or_default();
        let start = ring.iter().position(|&n| n == other).unwrap_or(0);
        out.push((v, 0.75 * scale));
        for (j, s) in stencil(ring.len()).into_iter().enumerate() {
            out.push((ring[(start + j) % ring.len()], s * scale));
        }
    };
    let mut ptr = vec![0u32];
    let mut idx = Vec::new();
    let mut val = Vec::new();
    let mut push_row = |mut entries: Vec<(u32, f64)>| {
        entries.sort_by_key(|e| e.0);
        let mut merged: Vec<(u32, f64)> = Vec::with_capacity(entries.len());
        for (c, w) in entries {
            match merged.last_mut() {
                Some(last) if last.0 == c => last.1 += w,
                _ => merged.push((c, w)),
            }
        }
        for (c, w) in merged {
            idx.push(c);
            val.push(w);
        }
        ptr.push(idx.len() as u32);
    };
    for v in 0..nv as u32 {
        push_row(vec![(v, 1.0)]);
    }
    for e in 0..ne {
        let [a, b] = t.edge(e);
        let mut row = Vec::with_capacity(16);
        let (Some(ra), Some(rb)) = (&rings[a as usize], &rings[b as usize]) else {
            // An edge with an end on the boundary: its midpoint.
            push_row(vec![(a, 0.5), (b, 0.5)]);
            continue;
        };
        match (ra.len() == 6, rb.len() == 6) {
            (true, true) => {
                let (c, d) = (opp(a, b)?, opp(b, a)?);
                row.extend([(a, 0.5), (b, 0.5), (c, 0.125), (d, 0.125)]);
                for w in [opp(a, c)?, opp(c, b)?, opp(d, a)?, opp(b, d)?] {
                    row.push((w, -1.0 / 16.0));
                }
            }
            (false, true) => extraordinary(a, b, &mut row, 1.0),
            (true, false) => extraordinary(b, a, &mut row, 1.0),
            (false, false) => {
                extraordinary(a, b, &mut row, 0.5);
                extraordinary(b, a, &mut row, 0.5);
            }
        }
        push_row(row);
    }
    let operator = CsrMat::try_new(nv + ne, nv, ptr, idx, val).map_err(|e| SchemeError::Mesh(e.into()))?;
    let split = t.split_triangles(par)?;
    let topology = split.topology;
    let (cne, cnv, cnf) = (topology.num_edges(), topology.num_vertices(), topology.num_faces());
    let mesh = Mesh::from_parts(topology, vec![0.0; cne], vec![0.0; cnv], vec![false; cnf], parent.options())?;
    Ok(Refined { operator, mesh })
}

/// The Butterfly rules for subla's generic [`OperatorPlan`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Butterfly;

impl OperatorRules for Butterfly {
    fn name(&self) -> &'static str {
        NAME
    }
    fn refine(&self, parent: &Mesh, par: Par) -> Result<Refined, SchemeError> {
        refine(parent, par)
    }
    /// The parent vertices (kept), then one edge point per parent edge.
    fn child_point(&self, parent: &Mesh, row: usize) -> Option<ChildPoint> {
        let t = parent.topology();
        let (nv, ne) = (t.num_vertices(), t.num_edges());
        if row < nv {
            Some(ChildPoint::Vertex(row as u32))
        } else if row < nv + ne {
            Some(ChildPoint::Edge((row - nv) as u32))
        } else {
            None
        }
    }
}

/// The modified Butterfly scheme behind subla's [`Refiner`] trait.
pub const BUTTERFLY: OperatorRefiner<Butterfly> = OperatorRefiner(Butterfly);

/// A built Butterfly refinement.
pub type ButterflyPlan = OperatorPlan<Butterfly>;

/// What [`run`] found.
#[derive(Debug)]
pub struct Summary {
    /// Faces after two levels.
    pub faces: usize,
    /// The leading eigenvalues (real parts) per valence 3–8 but 6.
    pub spectra: Vec<(usize, Vec<f64>)>,
}

/// Subdivides an icosahedron two levels, computes the spectra, and with
/// `out_dir` writes the refined mesh and `R`.
///
/// # Errors
/// The scheme's, the analysis' and the files' errors.
pub fn run(out_dir: Option<&Path>) -> Result<Summary, Box<dyn std::error::Error>> {
    let ico = shapes::icosahedron();
    let plan = BUTTERFLY.build(&ico.mesh, 2, Par::Rayon)?;
    let refined = plan.refined(2, Par::Rayon)?.clone();
    let x = subla::scheme::eval(&plan, ico.positions(), Par::Rayon)?;
    let mut spectra = Vec::new();
    for k in (3..=8).filter(|&k| k != 6) {
        let s = local_subdivision_matrix(&BUTTERFLY, DiskFaces::Triangles, k, 1)?;
        let sp = spectrum(&s)?;
        spectra.push((k, sp.values.iter().take(4).map(|e| e.value.re).collect()));
    }
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir)?;
        obj::write_obj_file(&MeshData::new(refined.clone(), x)?, dir.join("butterfly_L2.obj"))?;
        let mut refinement = Refinement::chain(&plan, Budget::default(), Par::Rayon)?;
        let r = refinement.compose(Budget::default(), Par::Rayon)?;
        mtx::write_matrix_market_file(r.as_ref(), dir.join("R.mtx"))?;
    }
    Ok(Summary { faces: refined.num_faces(), spectra })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1);
    let s = run(out.as_deref().map(Path::new))?;
    println!("butterfly: icosahedron, 2 levels: {} faces", s.faces);
    for (k, l) in &s.spectra {
        println!("valence {k}: leading eigenvalues {l:?}");
    }
    Ok(())
}
