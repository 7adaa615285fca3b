//! `subla analyze`: the local subdivision matrix of a scheme around
//! extraordinary vertices of several valences, its spectrum and the
//! classical conditions, as a table or JSON (`subla::analysis`).

use clap::Args;
use subla::analysis::{
    CharacteristicMap, Configuration, DiskFaces, Spectrum, boundary_characteristic_map, characteristic_map,
    edge_subdivision_matrix, local_subdivision_matrix_at, spectrum,
};
use subla::registry::{Backend, Faces, Path};
use subla::scheme::FallbackPolicy;

use crate::schemes;

#[derive(Args, Debug)]
pub(crate) struct AnalyzeArgs {
    /// Subdivision scheme (its plans must name their child points; √3,
    /// whose lattice turns, is analysed over two steps).
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    scheme: String,
    /// Valences: one (`5`), a range (`3..12`, both ends included) or a
    /// list (`3,5,7`); with `--boundary`, the faces around the vertex
    /// (from 1).
    #[arg(long, default_value = "3..12", value_parser = valences)]
    valence: Valences,
    /// A boundary vertex instead of an interior one: a half disk of
    /// `--valence` faces around it (boundary edges sharp, the mesh's
    /// default rule); its characteristic map is the half ring's, by the
    /// eigenvectors of λ1 and λ2.
    #[arg(long, conflicts_with_all = ["dart", "crease", "corner"])]
    boundary: bool,
    /// A dart: an interior vertex with one infinitely sharp edge (spoke 0)
    /// running out of it.
    #[arg(long, conflicts_with_all = ["crease", "corner"])]
    dart: bool,
    /// A crease vertex: an interior vertex with spokes 0 and ACROSS
    /// infinitely sharp (ACROSS sectors on one side; default half the
    /// valence, rounded down).
    #[arg(long, value_name = "ACROSS", num_args = 0..=1, default_missing_value = "0", conflicts_with = "corner")]
    crease: Option<usize>,
    /// A corner: a boundary vertex (a half disk of `--valence` faces)
    /// tagged infinitely sharp.
    #[arg(long)]
    corner: bool,
    /// An interior extraordinary edge of Catmull-Clark solids (`--scheme
    /// catmark`): `--valence` hexahedra around it, one layer above and
    /// below.
    #[arg(long, conflicts_with_all = ["boundary", "dart", "crease", "corner"])]
    edge: bool,
    /// With `--edge`: the solids' vertex rule on the edge (`layered`: the
    /// surface rule times the curve's; `joy-maccracken`: the original).
    #[arg(long, value_enum, default_value_t = crate::solid::VertexRuleArg::Layered, requires = "edge")]
    vertex_rule: crate::solid::VertexRuleArg,
    /// Rings of the neighbourhood (1 for Loop and Catmull-Clark; more for
    /// schemes of wider support).
    #[arg(long, default_value_t = 1)]
    rings: usize,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Write a picture of each valence's characteristic map (its ring, one
    /// colour per sector) into this folder, as `SCHEME-kK.png`.
    #[arg(long)]
    png: Option<std::path::PathBuf>,
}

/// A list of valences.
#[derive(Clone, Debug)]
pub(crate) struct Valences(Vec<usize>);

fn valences(s: &str) -> Result<Valences, String> {
    let number = |t: &str| t.trim().parse::<usize>().map_err(|_| format!("{t:?} is not a valence"));
    let list = if let Some((a, b)) = s.split_once("..") {
        let (a, b) = (number(a)?, number(b.trim_start_matches('='))?);
        if a > b {
            return Err(format!("the range {s} is empty"));
        }
        (a..=b).collect()
    } else {
        s.split(',').map(number).collect::<Result<Vec<_>, _>>()?
    };
    if let Some(&k) = list.iter().find(|&&k| k < 1) {
        return Err(format!("valence {k}: valences start at 3 (1 face with --boundary)"));
    }
    if list.len() > 64 {
        return Err(format!("{} valences: at most 64 at a time", list.len()));
    }
    if list.iter().any(|&k| k > 64) {
        return Err("valences above 64 are not analysed here".to_owned());
    }
    Ok(Valences(list))
}

/// One valence's row.
struct Row {
    valence: usize,
    size: usize,
    /// Subdivision steps the matrix spans (2 for √3).
    steps: u32,
    spectrum: Spectrum,
    limit_mask: Option<Vec<f64>>,
    /// The characteristic map, or why there is none.
    map: Result<CharacteristicMap, String>,
}

/// A saturated colour of hue `h` in `[0, 1)`, softened.
fn hue(h: f64) -> [u8; 4] {
    let channel = |shift: f64| {
        let x = ((h + shift).rem_euclid(1.0) * 6.0 - 3.0).abs() - 1.0;
        (60.0 + 170.0 * x.clamp(0.0, 1.0)) as u8
    };
    [channel(0.0), channel(2.0 / 3.0), channel(1.0 / 3.0), 255]
}

/// Levels the characteristic map's ring is refined.
const MAP_LEVELS: u32 = 3;

/// Draws the ring of `map` into a square picture: its triangles filled,
/// one hue per sector of the parameter domain.
fn picture(map: &CharacteristicMap, size: u32) -> subla_render::RgbaImage {
    let mut img = subla_render::RgbaImage::filled(size, size, [255, 255, 255, 255]);
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in &map.points {
        for c in 0..2 {
            lo[c] = lo[c].min(p[c]);
            hi[c] = hi[c].max(p[c]);
        }
    }
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-300);
    let margin = 0.05 * f64::from(size);
    let scale = (f64::from(size) - 2.0 * margin) / span;
    let to_px = |p: [f64; 2]| [margin + (p[0] - lo[0]) * scale, f64::from(size) - margin - (p[1] - lo[1]) * scale];
    let k = map.valence as f64;
    for (t, &sector) in map.triangles.iter().zip(&map.sectors) {
        let [a, b, c] = t.map(|i| to_px(map.points[i as usize]));
        // One hue per sector of the parameter domain.
        let colour = hue(f64::from(sector) / k);
        let (x0, x1) = (
            a[0].min(b[0]).min(c[0]).floor().max(0.0) as u32,
            a[0].max(b[0]).max(c[0]).ceil().min(f64::from(size - 1)) as u32,
        );
        let (y0, y1) = (
            a[1].min(b[1]).min(c[1]).floor().max(0.0) as u32,
            a[1].max(b[1]).max(c[1]).ceil().min(f64::from(size - 1)) as u32,
        );
        let edge =
            |p: [f64; 2], q: [f64; 2], r: [f64; 2]| (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
        let area = edge(a, b, c);
        if area == 0.0 {
            continue;
        }
        for y in y0..=y1 {
            for x in x0..=x1 {
                let p = [f64::from(x) + 0.5, f64::from(y) + 0.5];
                let (w0, w1, w2) = (edge(b, c, p) / area, edge(c, a, p) / area, edge(a, b, p) / area);
                if w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0 {
                    let at = 4 * (y as usize * size as usize + x as usize);
                    img.pixels[at..at + 4].copy_from_slice(&colour);
                }
            }
        }
    }
    img
}

pub(crate) fn analyze(args: &AnalyzeArgs) -> Result<(), String> {
    let scheme = schemes::scheme(&args.scheme)?;
    let faces = match scheme.faces() {
        Faces::Triangles => DiskFaces::Triangles,
        _ => DiskFaces::Quads,
    };
    // The kernels' plans name every child point (the edge-friend and
    // halfedge plans number theirs otherwise).
    let path = if scheme.has(Backend::Cpu, Path::Kernels) { Path::Kernels } else { scheme.fastest(Backend::Cpu) };
    let choice = schemes::Choice { backend: Backend::Cpu, path, fallback: FallbackPolicy::Never };
    let (refiner, _) = schemes::refiner(scheme, choice, &Default::default())?;
    let mut rows = Vec::new();
    let configuration_at = |k: usize| match (args.boundary, args.dart, args.crease, args.corner) {
        (true, ..) => Configuration::Boundary,
        (_, true, ..) => Configuration::Dart,
        (_, _, Some(0), _) => Configuration::Crease { across: k / 2 },
        (_, _, Some(across), _) => Configuration::Crease { across },
        (.., true) => Configuration::Corner,
        _ => Configuration::Interior,
    };
    let open = args.boundary || args.corner;
    let configuration = if args.edge { Configuration::Edge } else { configuration_at(4) };
    if args.edge && args.scheme != "catmark" {
        return Err(format!(
            "--edge analyses Catmull-Clark solids around an extraordinary edge (--scheme catmark), not {}",
            args.scheme
        ));
    }
    for &k in &args.valence.0 {
        if !open && k < 3 {
            return Err(format!("valence {k}: valences start at 3 (1 face with --boundary or --corner)"));
        }
        let s = if args.edge {
            edge_subdivision_matrix(&subla::solid::CatmarkSolid::new(args.vertex_rule.rule()), k, args.rings, 1)
        } else {
            local_subdivision_matrix_at(&*refiner, faces, configuration_at(k), k, args.rings)
        }
        .map_err(|e| format!("{} at valence {k}: {e}", args.scheme))?;
        let sp = spectrum(&s).map_err(|e| e.to_string())?;
        let map = match configuration {
            Configuration::Interior => characteristic_map(&*refiner, faces, k, MAP_LEVELS).map_err(|e| e.to_string()),
            Configuration::Boundary => {
                boundary_characteristic_map(&*refiner, faces, k, MAP_LEVELS).map_err(|e| e.to_string())
            }
            other => Err(format!("not drawn at a {} vertex", other.name())),
        };
        rows.push(Row {
            valence: k,
            size: s.matrix.nrows(),
            steps: s.steps,
            limit_mask: s.limit_mask(),
            spectrum: sp,
            map,
        });
    }
    if let Some(dir) = &args.png {
        std::fs::create_dir_all(dir).map_err(|e| format!("--png {}: {e}", crate::output::shown(dir)))?;
        for r in &rows {
            if let Ok(map) = &r.map {
                let path = dir.join(format!("{}-k{}.png", args.scheme, r.valence));
                picture(map, 512).write_png(&path).map_err(|e| format!("{}: {e}", crate::output::shown(&path)))?;
            }
        }
    }
    if args.json {
        let json: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let c = r.spectrum.conditions();
                serde_json::json!({
                    "valence": r.valence,
                    "size": r.size,
                    "steps": r.steps,
                    "eigenvalues": r.spectrum.values.iter().map(|e| serde_json::json!({
                        "re": e.value.re, "im": e.value.im, "fourier": e.fourier,
                    })).collect::<Vec<_>>(),
                    "conditions": {
                        "unit_dominant": c.unit_dominant,
                        "subdominant_pair": c.subdominant_pair,
                        "fourier_index_one": c.fourier_index_one,
                        "gap": c.gap,
                        "all": c.all(),
                    },
                    "limit_mask": r.limit_mask,
                    "characteristic_map": match &r.map {
                        Ok(m) => serde_json::json!({
                            "regular": m.regular,
                            "injective": m.injective,
                            "area_range": m.area_range,
                            "triangles": m.triangles.len(),
                        }),
                        Err(e) => serde_json::json!({ "error": e }),
                    },
                })
            })
            .collect();
        let mut out = serde_json::json!({
            "scheme": args.scheme,
            "rings": args.rings,
            "faces": format!("{faces:?}").to_lowercase(),
            "configuration": configuration.name(),
            "valences": json,
        });
        if args.edge {
            out["vertex_rule"] = args.vertex_rule.rule().name().into();
        }
        println!("{out}");
        return Ok(());
    }
    println!(
        "{} around {} ({} ring{} of {}): eigenvalues by modulus{}",
        args.scheme,
        match configuration {
            Configuration::Interior => "an interior vertex".to_owned(),
            Configuration::Boundary => "a boundary vertex, k faces".to_owned(),
            Configuration::Corner => "a corner vertex (boundary, infinitely sharp), k faces".to_owned(),
            Configuration::Dart => "a dart (one infinitely sharp edge)".to_owned(),
            Configuration::Edge => format!(
                "an extraordinary edge of Catmull-Clark solids (k hexahedra, 3 layers, vertex rule {})",
                args.vertex_rule.rule().name()
            ),
            Configuration::Crease { .. } => match args.crease {
                Some(0) | None => "a crease vertex (spokes 0 and k/2 infinitely sharp)".to_owned(),
                Some(a) => format!("a crease vertex (spokes 0 and {a} infinitely sharp)"),
            },
            other => format!("a {} configuration", other.name()),
        },
        args.rings,
        if args.rings == 1 { "" } else { "s" },
        if faces == DiskFaces::Quads { "quads" } else { "triangles" },
        if configuration == Configuration::Interior { ", Fourier index in brackets" } else { "" }
    );
    if rows.iter().any(|r| r.steps == 2) {
        println!(
            "(the matrix of two steps: {} turns the lattice, and two steps bring it back at a third of the size)",
            args.scheme
        );
    }
    println!();
    println!("| k | size | λ0 | λ1 | λ2 | λ3 | |λ3|/λ1 | conditions | characteristic map |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let v = &r.spectrum.values;
        let show = |i: usize| {
            v.get(i).map_or("–".to_owned(), |e| {
                let w = e.fourier.map_or(String::new(), |w| format!(" [{w}]"));
                if e.value.im.abs() > 1e-7 {
                    format!("{:.6}{:+.6}i{w}", e.value.re, e.value.im)
                } else {
                    format!("{:.6}{w}", e.value.re)
                }
            })
        };
        let ratio = match (v.get(1), v.get(3)) {
            (Some(a), Some(b)) if a.value.norm() > 0.0 => format!("{:.4}", b.value.norm() / a.value.norm()),
            _ => "–".to_owned(),
        };
        let c = r.spectrum.conditions();
        let verdict = if c.all() {
            "all hold".to_owned()
        } else {
            let failed: Vec<&str> = [
                (c.unit_dominant, "λ0 = 1 simple"),
                (c.subdominant_pair, "λ1 = λ2 real"),
                (c.fourier_index_one, "Fourier index 1"),
                (c.gap, "|λ3| < λ2"),
            ]
            .into_iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, what)| what)
            .collect();
            format!("fails: {}", failed.join(", "))
        };
        let map = match &r.map {
            Ok(m) if m.regular && m.injective => "regular, injective".to_owned(),
            Ok(m) if m.regular => "regular, not injective".to_owned(),
            Ok(_) => "not regular".to_owned(),
            Err(_) => "none".to_owned(),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {ratio} | {verdict} | {map} |",
            r.valence,
            r.size,
            show(0),
            show(1),
            show(2),
            show(3)
        );
    }
    Ok(())
}
