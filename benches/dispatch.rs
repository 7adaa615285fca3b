//! What the registry's type-erased dispatch costs: the same build and eval
//! through a concrete refiner and through the boxed `dyn DynRefiner` the
//! registry hands out (one virtual call per build, step and eval; the
//! kernels inside are the same), alternating, medians of the runs.
//!
//! `cargo bench -p subla-bench --bench dispatch` (`SUBLA_BENCH_QUICK=1`:
//! smaller meshes, fewer runs)

use std::hint::black_box;
use std::time::Instant;

use subla::registry::{Backend, Path, Registry, Setup};
use subla_algebra::Par;
use subla_catmark::CatmarkSlak;
use subla_loop::LoopSlak;
use subla_mesh::Mesh;
use subla_scheme::{Refiner, eval, modeling};

/// Seconds of one call of `f`.
fn once<R>(f: &mut impl FnMut() -> R) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_secs_f64()
}

/// Medians of `runs` runs of `a` and of `b`, alternating, after a warm-up
/// of each.
fn alternate<A, B>(runs: usize, mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> (f64, f64) {
    once(&mut a);
    once(&mut b);
    let (mut ta, mut tb) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        ta.push(once(&mut a));
        tb.push(once(&mut b));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut ta), median(&mut tb))
}

/// The rows of one scheme: static build + eval and modeling, concrete
/// against boxed.
fn rows<R: Refiner<Input = Mesh>>(
    name: &str,
    concrete: &R,
    mesh: &Mesh,
    x: ndarray::ArrayView2<'_, f64>,
    levels: u32,
    runs: usize,
) -> Vec<(String, f64, f64)> {
    let registry = Registry::builtin();
    let boxed = registry
        .scheme(name)
        .and_then(|s| s.refiner(Backend::Cpu, Path::Kernels, &Setup::default()))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let boxed = &*boxed;
    let build_eval = |r: &dyn Fn() -> ndarray::Array2<f64>| r().nrows();
    let (a, b) = alternate(
        runs,
        || {
            build_eval(&|| {
                eval(&concrete.build(mesh, levels, Par::Rayon).expect("build"), x, Par::Rayon).expect("eval")
            })
        },
        || build_eval(&|| eval(&boxed.build(mesh, levels, Par::Rayon).expect("build"), x, Par::Rayon).expect("eval")),
    );
    let plan = concrete.build(mesh, levels, Par::Rayon).expect("build");
    let bplan = boxed.build(mesh, levels, Par::Rayon).expect("build");
    let (c, d) = alternate(
        runs,
        || eval(&plan, x, Par::Rayon).expect("eval").nrows(),
        || eval(&bplan, x, Par::Rayon).expect("eval").nrows(),
    );
    let (e, f) = alternate(
        runs,
        || modeling(concrete, mesh, x, levels, Par::Rayon).expect("modeling").1.nrows(),
        || modeling(boxed, mesh, x, levels, Par::Rayon).expect("modeling").1.nrows(),
    );
    vec![
        (format!("{name} L{levels} build + eval"), a, b),
        (format!("{name} L{levels} eval"), c, d),
        (format!("{name} L{levels} modeling"), e, f),
    ]
}

fn main() {
    let quick = std::env::var_os("SUBLA_BENCH_QUICK").is_some();
    let (side, freq, runs) = if quick { (64, 20, 3) } else { (317, 100, 9) };
    let quads = subla_bench::quad_torus(side, side);
    let (tris, tri_pos) = subla_bench::icosphere(freq);
    println!(
        "dispatch bench: {}-quad torus, {}-triangle icosphere; f64 xyz; {} threads; medians of {runs} alternating runs",
        quads.mesh.num_faces(),
        tris.num_faces(),
        rayon::current_num_threads()
    );
    let mut table = rows("catmark", &CatmarkSlak, &quads.mesh, quads.positions(), 2, runs);
    table.extend(rows("loop", &LoopSlak::new(), &tris, tri_pos.view(), 2, runs));
    println!("| what | concrete ms | registry (boxed) ms | boxed / concrete |");
    println!("|---|---|---|---|");
    for (what, a, b) in table {
        println!("| {what} | {:.2} | {:.2} | {:.3} |", a * 1e3, b * 1e3, b / a);
    }
}
