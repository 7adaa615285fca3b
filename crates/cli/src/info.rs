//! `subla info`: what a mesh is made of, and what is unusual about it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subla_mesh::tags::SHARPNESS_INFINITE;
use subla_mesh::topology::{edge_tag, vertex_tag};
use subla_mesh::{FVarLinearInterpolation, FaceVarying, GroupKind, Mesh, MeshData, Validation};

/// At most this many elements are listed per finding.
const LIST: usize = 8;

fn histogram(values: impl Iterator<Item = usize>) -> BTreeMap<usize, usize> {
    let mut h = BTreeMap::new();
    for v in values {
        *h.entry(v).or_insert(0) += 1;
    }
    h
}

fn listed(items: &[usize]) -> String {
    let mut s: Vec<String> = items.iter().take(LIST).map(usize::to_string).collect();
    if items.len() > LIST {
        s.push(format!("… {} more", items.len() - LIST));
    }
    s.join(", ")
}

/// The report as text and as JSON. `strict` is the manifold validation's
/// verdict on the same input (`None`: it accepts it).
pub(crate) fn report(name: &str, data: &MeshData, strict: Option<String>) -> (String, serde_json::Value) {
    let mesh = &data.mesh;
    let t = mesh.topology();
    let (nv, nf, ne, nc) = (t.num_vertices(), t.num_faces(), t.num_edges(), t.num_corners());
    let orders = histogram((0..nf).map(|f| t.face_order(f)));
    let valences = histogram((0..nv).map(|v| t.valence(v)));
    let tagged_edges = |bit: u8| -> Vec<usize> { (0..ne).filter(|&e| t.edge_tags()[e] & bit != 0).collect() };
    let tagged_vertices = |bit: u8| -> Vec<usize> { (0..nv).filter(|&v| t.vertex_tags()[v] & bit != 0).collect() };
    let boundary_edges = tagged_edges(edge_tag::BOUNDARY);
    let nm_edges = tagged_edges(edge_tag::NON_MANIFOLD);
    let degenerate = tagged_edges(edge_tag::DEGENERATE);
    let inconsistent = tagged_edges(edge_tag::INCONSISTENT);
    let boundary_vertices = tagged_vertices(vertex_tag::BOUNDARY);
    let nm_vertices = tagged_vertices(vertex_tag::NON_MANIFOLD);
    let isolated = tagged_vertices(vertex_tag::ISOLATED);
    let repeated = tagged_vertices(vertex_tag::REPEATED);
    let es = mesh.edge_sharpness();
    let semi: Vec<usize> = (0..ne).filter(|&e| es[e] > 0.0 && es[e] < SHARPNESS_INFINITE).collect();
    let infinite: Vec<usize> = (0..ne).filter(|&e| es[e] >= SHARPNESS_INFINITE).collect();
    let corners: Vec<usize> = (0..nv).filter(|&v| mesh.vertex_sharpness()[v] > 0.0).collect();
    let holes: Vec<usize> = (0..nf).filter(|&f| mesh.holes()[f]).collect();
    let extraordinary = (0..nv)
        .filter(|&v| {
            let boundary = t.vertex_tags()[v] & vertex_tag::BOUNDARY != 0;
            let n = t.valence(v);
            n > 0 && if boundary { n != 3 } else { n != 4 }
        })
        .count();
    let p = data.positions();
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for row in p.rows() {
        for k in 0..3.min(row.len()) {
            lo[k] = lo[k].min(row[k]);
            hi[k] = hi[k].max(row[k]);
        }
    }
    let euler = nv as i64 - ne as i64 + nf as i64;
    let closed = boundary_edges.is_empty();
    let manifold = t.is_manifold();
    let opts = mesh.options();

    let mut s = String::new();
    let _ = writeln!(s, "{name}");
    let channels = data.vertices.ncols();
    let _ = writeln!(
        s,
        "  vertices {nv}, faces {nf}, edges {ne}, corners {nc}, channels {channels} ({})",
        data.channels.join(", ")
    );
    if !data.groups.is_empty() {
        let mut listed: Vec<String> = data
            .groups
            .iter()
            .take(LIST)
            .map(|g| format!("{} {:?} faces {}..{}", group_kind(g.kind), g.name, g.faces.start, g.faces.end))
            .collect();
        if data.groups.len() > LIST {
            listed.push(format!("… {} more", data.groups.len() - LIST));
        }
        let _ = writeln!(s, "  groups ({}): {}", data.groups.len(), listed.join(", "));
    }
    let seams_of = |fv: &Option<FaceVarying>| fv.as_ref().map(|fv| seams(&data.mesh, fv));
    let (vt_seams, vn_seams) = (seams_of(&data.texcoords), seams_of(&data.normals));
    let face_varying: Vec<String> =
        [("texture coordinates (vt)", &data.texcoords, &vt_seams), ("normals (vn)", &data.normals, &vn_seams)]
            .into_iter()
            .filter_map(|(what, fv, seams)| {
                let fv = fv.as_ref()?;
                let seams = match seams {
                    Some(Ok(c)) => {
                        format!(", {} seam edges, {} vertices with several values", c.seam_edges, c.split_vertices)
                    }
                    Some(Err(e)) => format!(" (not a channel of this mesh: {e})"),
                    None => String::new(),
                };
                Some(format!("{what}: {} values, {} channels{seams}", fv.values.nrows(), fv.values.ncols()))
            })
            .collect();
    if !face_varying.is_empty() {
        let _ = writeln!(s, "  face-varying data: {}", face_varying.join(", "));
    }
    if !data.skipped.is_empty() {
        let listed: Vec<String> = data.skipped.iter().map(ToString::to_string).collect();
        let _ = writeln!(s, "  not read: {}", listed.join(", "));
    }
    let _ = writeln!(
        s,
        "  face orders: {}",
        orders.iter().map(|(k, n)| format!("{k}: {n}")).collect::<Vec<_>>().join(", ")
    );
    let _ =
        writeln!(s, "  valences: {}", valences.iter().map(|(k, n)| format!("{k}: {n}")).collect::<Vec<_>>().join(", "));
    let _ = writeln!(s, "  extraordinary vertices: {extraordinary}");
    let _ = writeln!(s, "  bounding box: {lo:?} .. {hi:?}");
    let _ = writeln!(
        s,
        "  {} and {}; Euler characteristic {euler}{}",
        if closed {
            "closed".to_owned()
        } else {
            format!("open ({} boundary edges, {} boundary vertices)", boundary_edges.len(), boundary_vertices.len())
        },
        if manifold { "manifold" } else { "non-manifold" },
        if closed && manifold && euler % 2 == 0 {
            format!(" (genus {} if connected)", (2 - euler) / 2)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        s,
        "  creases: {} semi-sharp, {} infinitely sharp edges; {} corner vertices; {} holes",
        semi.len(),
        infinite.len(),
        corners.len(),
        holes.len()
    );
    let _ = writeln!(
        s,
        "  options: boundary {:?}, crease method {:?}, triangles {:?}",
        opts.boundary, opts.crease_method, opts.triangle_subdivision
    );
    let mut findings = Vec::new();
    let mut finding = |what: &str, items: &[usize]| {
        if !items.is_empty() {
            findings.push(format!("{what} ({}): {}", items.len(), listed(items)));
        }
    };
    finding("non-manifold edges", &nm_edges);
    finding("degenerate edges (a vertex to itself)", &degenerate);
    finding("edges used in the same direction by two faces (inconsistent winding)", &inconsistent);
    finding("non-manifold vertices", &nm_vertices);
    finding("isolated vertices", &isolated);
    finding("vertices repeated within a face", &repeated);
    if let Some(e) = &strict {
        findings.push(format!("strict (manifold) validation: {e}"));
    }
    if findings.is_empty() {
        let _ = writeln!(s, "  no problems found");
    } else {
        let _ = writeln!(s, "  findings (accepted, as OpenSubdiv accepts them; elements by index):");
        for f in &findings {
            let _ = writeln!(s, "    - {f}");
        }
    }
    let json = serde_json::json!({
        "name": name,
        "vertices": nv, "faces": nf, "edges": ne, "corners": nc, "channels": channels,
        "channel_names": data.channels,
        "groups": data.groups.iter().map(|g| serde_json::json!({
            "kind": group_kind(g.kind), "name": g.name, "faces": [g.faces.start, g.faces.end],
        })).collect::<Vec<_>>(),
        "texcoords": data.texcoords.as_ref().map(|fv| fv.values.nrows()),
        "normals": data.normals.as_ref().map(|fv| fv.values.nrows()),
        "texcoord_seams": vt_seams.as_ref().and_then(|r| r.as_ref().ok()).map(Seams::json),
        "normal_seams": vn_seams.as_ref().and_then(|r| r.as_ref().ok()).map(Seams::json),
        "skipped": data.skipped.iter().map(|k| serde_json::json!({
            "what": k.what, "count": k.count, "line": k.line,
        })).collect::<Vec<_>>(),
        "face_orders": orders, "valences": valences, "extraordinary_vertices": extraordinary,
        "bounding_box": [lo, hi], "closed": closed, "manifold": manifold, "euler_characteristic": euler,
        "boundary_edges": boundary_edges.len(), "boundary_vertices": boundary_vertices.len(),
        "semi_sharp_edges": semi.len(), "infinitely_sharp_edges": infinite.len(),
        "corner_vertices": corners.len(), "holes": holes.len(),
        "non_manifold_edges": nm_edges, "non_manifold_vertices": nm_vertices,
        "degenerate_edges": degenerate, "inconsistent_edges": inconsistent,
        "isolated_vertices": isolated, "repeated_vertices": repeated,
        "strict_validation": strict,
    });
    (s, json)
}

/// What feature-adaptive Catmull-Clark refinement would isolate, level by
/// level, and the patches it would make: text lines and JSON.
pub(crate) fn adaptive(data: &MeshData, isolation: u32) -> (String, serde_json::Value) {
    use subla::adaptive::basis::PatchType;
    use subla::adaptive::{EndCap, PatchTable, Scheme, SparseRefinement};
    let mut s = String::new();
    let (budget, _) = crate::memory::budget(None);
    let refinement = match SparseRefinement::build_within(Scheme::Catmark, &data.mesh, isolation, None, budget) {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(s, "  adaptive refinement (catmark, isolation {isolation}): not available: {e}");
            return (s, serde_json::json!({ "isolation": isolation, "error": e.to_string() }));
        }
    };
    let levels = refinement.levels();
    let selected: Vec<usize> =
        levels.iter().map(|l| (0..l.num_faces()).filter(|&f| l.is_selected(f)).count()).collect();
    let vertices = refinement.vertices_per_level();
    let face_counts: Vec<usize> = levels.iter().map(|l| l.num_faces()).collect();
    let num_levels = levels.len();
    let table = match PatchTable::new(refinement, EndCap::GregoryBasis) {
        Ok(t) => t,
        Err(e) => {
            let _ = writeln!(s, "  adaptive refinement (catmark, isolation {isolation}): no patch table: {e}");
            return (s, serde_json::json!({ "isolation": isolation, "error": e.to_string() }));
        }
    };
    // Per level: regular interior, regular boundary, end caps.
    let mut per_level = vec![[0usize; 3]; num_levels];
    for p in table.patches() {
        let k = match (p.ty, p.param.boundary()) {
            (PatchType::Regular, 0) => 0,
            (PatchType::Regular, _) => 1,
            _ => 2,
        };
        per_level[usize::from(p.level)][k] += 1;
    }
    let _ = writeln!(
        s,
        "  adaptive refinement (catmark, isolation {isolation}): {} levels, {} patches",
        num_levels - 1,
        table.patches().len()
    );
    for (k, ((sel, nv), c)) in selected.iter().zip(&vertices).zip(&per_level).enumerate() {
        let _ = writeln!(
            s,
            "    level {k}: {nv} vertices, {} faces, {sel} refined further; patches: {} regular, {} regular on boundaries, {} end caps",
            face_counts[k], c[0], c[1], c[2]
        );
    }
    let json = serde_json::json!({
        "isolation": isolation,
        "levels": (0..num_levels).map(|k| serde_json::json!({
            "vertices": vertices[k], "faces": face_counts[k], "refined": selected[k],
            "regular_patches": per_level[k][0], "boundary_patches": per_level[k][1], "end_caps": per_level[k][2],
        })).collect::<Vec<_>>(),
        "patches": table.patches().len(),
    });
    (s, json)
}

/// `g` or `o`, as OBJ writes them.
fn group_kind(kind: GroupKind) -> &'static str {
    match kind {
        GroupKind::Group => "g",
        GroupKind::Object => "o",
    }
}

/// The strict (manifold) validation's error on `data`, if any.
pub(crate) fn strict_verdict(data: &MeshData) -> Option<String> {
    let t = data.mesh.topology();
    let faces: Vec<&[u32]> = (0..t.num_faces()).map(|f| t.face(f)).collect();
    let mut b = subla_mesh::MeshBuilder::from_faces(t.num_vertices(), &faces).validation(Validation::Manifold);
    b = b.options(data.mesh.options());
    b.build(subla_algebra::Par::Rayon).err().map(|e| e.to_string())
}

/// Where a face-varying channel's values split: the edges across which they
/// differ (seams, OpenSubdiv's mismatched edges) and the vertices with
/// more than one value.
#[derive(Copy, Clone, Debug)]
struct Seams {
    seam_edges: usize,
    split_vertices: usize,
}

impl Seams {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({ "seam_edges": self.seam_edges, "vertices_with_several_values": self.split_vertices })
    }
}

/// The seams of channel `fv` over `mesh`, as the face-varying refinement
/// sees them (OpenSubdiv's face-varying topology).
fn seams(mesh: &Mesh, fv: &FaceVarying) -> Result<Seams, String> {
    let base = subla_scheme::fvar::FVarLevel::base(mesh, &fv.indices, fv.values.nrows(), FVarLinearInterpolation::None)
        .map_err(|e| e.to_string())?;
    let l = &base.level;
    Ok(Seams {
        seam_edges: l.edge_tags.iter().filter(|t| t.mismatch).count(),
        split_vertices: l.value_ptr.windows(2).filter(|w| w[1] - w[0] > 1).count(),
    })
}
