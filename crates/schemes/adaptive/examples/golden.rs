//! Scratch: compare limit evaluation with OpenSubdiv's limit goldens.
use subla_adaptive::basis::{DerivOrder, Weights};
use subla_adaptive::{EndCap, PatchTable, SparseRefinement};
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let meshes = std::env::args().nth(2).unwrap();
    let filter = std::env::args().nth(3).unwrap_or_default();
    let (mut ok, mut bad) = (0, 0);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().map_or(false, |e| e == "txt"))
        .collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.starts_with("catmark") || !name.contains(&filter) {
            continue;
        }
        let shape = name.split('.').next().unwrap();
        let iso: u32 = name.split('.').nth(1).unwrap()[3..].parse().unwrap();
        let end = if name.contains("bspline") { EndCap::BSplineBasis } else { EndCap::GregoryBasis };
        let text = std::fs::read_to_string(&p).unwrap();
        let sel: Option<Vec<u32>> = if name.contains("selected") {
            Some(
                std::fs::read_to_string(p.with_extension("faces"))
                    .unwrap()
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.trim().parse().unwrap())
                    .collect(),
            )
        } else {
            None
        };
        let data = match subla_mesh::obj::read_obj(
            std::path::Path::new(&format!("{meshes}/{shape}.obj")),
            subla_mesh::Validation::OpenSubdiv,
        ) {
            Ok(d) => d,
            Err(_) => continue,
        };
        let mesh = if data.left_handed { data.mesh.reversed_winding().unwrap() } else { data.mesh.clone() };
        let r = match SparseRefinement::build(&mesh, iso, sel.as_deref()) {
            Ok(r) => r,
            Err(_) => continue,
        };
        let table = PatchTable::new(r, end);
        let nv = data.vertices.nrows();
        let ctrl: Vec<f64> =
            (0..nv).flat_map(|i| (0..3).map(move |c| (i, c))).map(|(i, c)| data.vertices[[i, c]]).collect();
        let vals = table.point_values(&ctrl, 3);
        let mut w = Weights::new(DerivOrder::First);
        let (mut lo, mut hi) = ([f64::MAX; 3], [f64::MIN; 3]);
        let mut rows = Vec::new();
        let mut dmax: f64 = 0.0;
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let x: Vec<f64> = l.split_whitespace().map(|s| s.parse().unwrap()).collect();
            for c in 0..3 {
                lo[c] = lo[c].min(x[3 + c]);
                hi[c] = hi[c].max(x[3 + c]);
            }
            for c in 0..6 {
                dmax = dmax.max(x[6 + c].abs());
            }
            rows.push(x);
        }
        let diag = ((0..3).map(|c| (hi[c] - lo[c]).powi(2)).sum::<f64>()).sqrt();
        let (mut ep, mut ed) = (0f64, 0f64);
        let mut worst = None;
        for x in &rows {
            let found = table.find(x[0] as u32, x[1], x[2]);
            if x[3].is_nan() {
                if found.is_ok() {
                    ep = f64::INFINITY;
                }
                continue;
            }
            let Ok(pi) = found else {
                ep = f64::INFINITY;
                continue;
            };
            table.evaluate_basis(pi, x[1], x[2], &mut w);
            let pts = table.patch_points(pi);
            let mut got = [0.0; 9];
            for (k, &pt) in pts.iter().enumerate() {
                for c in 0..3 {
                    let val = vals[pt as usize * 3 + c];
                    got[c] += w.point()[k] * val;
                    got[3 + c] += w.du()[k] * val;
                    got[6 + c] += w.dv()[k] * val;
                }
            }
            let e = (0..3).map(|c| (got[c] - x[3 + c]).abs()).fold(0.0, f64::max) / diag;
            let d = (0..6).map(|c| (got[3 + c] - x[6 + c]).abs()).fold(0.0, f64::max) / dmax.max(1e-300);
            if e > ep {
                ep = e;
                worst = Some((x[0], x[1], x[2], table.patches()[pi].ty, table.patches()[pi].level));
            }
            ed = ed.max(d);
        }
        let want: usize = text
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .find_map(|w| w.strip_prefix("patches="))
            .unwrap()
            .parse()
            .unwrap();
        let pass = ep <= 1e-6 && ed <= 1e-5 && want == table.patches().len();
        if want != table.patches().len() {
            println!("patch count {} want {want}", table.patches().len());
        }
        if pass {
            ok += 1
        } else {
            bad += 1
        }
        println!(
            "{} {name}: pos {ep:.2e} der {ed:.2e} patches {} {:?} worst {:?}",
            if pass { "ok " } else { "BAD" },
            table.patches().len(),
            table.counts(),
            worst
        );
    }
    println!("ok {ok} bad {bad}");
}
