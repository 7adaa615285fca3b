//! `subla analyze`: the local subdivision matrix of a scheme around
//! extraordinary vertices of several valences, its spectrum and the
//! classical conditions, as a table or JSON (`subla::analysis`).

use clap::Args;
use subla::analysis::{DiskFaces, Spectrum, local_subdivision_matrix, spectrum};
use subla::registry::{Backend, Faces, Path};
use subla::scheme::FallbackPolicy;

use crate::schemes;

#[derive(Args, Debug)]
pub(crate) struct AnalyzeArgs {
    /// Subdivision scheme (its plans must name their child points: the
    /// primal schemes; √3 is refused, its lattice turns).
    #[arg(long, default_value = "catmark", value_parser = schemes::scheme_parser())]
    scheme: String,
    /// Valences: one (`5`), a range (`3..12`, both ends included) or a
    /// list (`3,5,7`).
    #[arg(long, default_value = "3..12", value_parser = valences)]
    valence: Valences,
    /// Rings of the neighbourhood (1 for Loop and Catmull-Clark; more for
    /// schemes of wider support).
    #[arg(long, default_value_t = 1)]
    rings: usize,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
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
    if let Some(&k) = list.iter().find(|&&k| k < 3) {
        return Err(format!("valence {k}: valences start at 3"));
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
    spectrum: Spectrum,
    limit_mask: Option<Vec<f64>>,
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
    for &k in &args.valence.0 {
        let s = local_subdivision_matrix(&*refiner, faces, k, args.rings)
            .map_err(|e| format!("{} at valence {k}: {e}", args.scheme))?;
        let sp = spectrum(&s).map_err(|e| e.to_string())?;
        rows.push(Row { valence: k, size: s.matrix.nrows(), limit_mask: s.limit_mask(), spectrum: sp });
    }
    if args.json {
        let json: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let c = r.spectrum.conditions();
                serde_json::json!({
                    "valence": r.valence,
                    "size": r.size,
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
                })
            })
            .collect();
        let out = serde_json::json!({ "scheme": args.scheme, "rings": args.rings, "faces": format!("{faces:?}").to_lowercase(), "valences": json });
        println!("{out}");
        return Ok(());
    }
    println!(
        "{} around an interior vertex ({} ring{} of {}): eigenvalues by modulus, Fourier index in brackets",
        args.scheme,
        args.rings,
        if args.rings == 1 { "" } else { "s" },
        if faces == DiskFaces::Quads { "quads" } else { "triangles" }
    );
    println!();
    println!("| k | size | λ0 | λ1 | λ2 | λ3 | |λ3|/λ1 | conditions |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let v = &r.spectrum.values;
        let show = |i: usize| {
            v.get(i).map_or("–".to_owned(), |e| {
                let w = e.fourier.map_or(String::new(), |w| format!(" [{w}]"));
                if e.value.im.abs() > 1e-12 {
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
                (c.gap, "|λ3| < λ1"),
            ]
            .into_iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, what)| what)
            .collect();
            format!("fails: {}", failed.join(", "))
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {ratio} | {verdict} |",
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
