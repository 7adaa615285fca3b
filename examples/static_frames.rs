//! Static topology in a frame loop: pay for the topology once, then refine
//! every frame's vertex data with one evaluation of the composed
//! refinement matrix `R` (Mlakar et al. 2020, §6.2–6.3; `docs/static.md`).
//!
//! ```text
//! cargo run --release --example static_frames -- [MESH.obj] [LEVELS] [FRAMES] [EVALUATION]
//! ```
//!
//! Without a mesh (or with `''`) it uses a 64 × 64 quad torus. `R` is
//! built with `Refinement::tensor_of`: the rows inside regular control
//! faces stay in tensor-product form (8 bytes a row, no stored weights) and
//! only the others are multiplied out. `EVALUATION` is `auto` (the
//! default), `composed`, `tensor` or `separable`. Each frame moves the
//! control points (a travelling wave), evaluates `R` in `f32` with four
//! channels (xyz and a padding channel, 16-byte rows), and the first frame
//! is checked against the level-by-level evaluation of the plan.
//!
//! After the first frame the loop allocates nothing: the evaluator's
//! scratch and the output are made once and reused, and everything runs
//! on a rayon pool's thread, where rayon allocates nothing either (called
//! from a thread outside the pool, rayon's injector queue allocates about
//! 1.5 KB every 63 parallel calls).

use std::time::Instant;

use ndarray::Array2;
use subla::mesh::{MeshBuilder, obj};
use subla::scheme::refinement::{Budget, Evaluation, Refinement};
use subla::{CatmarkSlak, Mesh, Par, Plan, Refiner, Validation};

/// Errors that can cross from the pool's thread back to `main`.
type Error = Box<dyn std::error::Error + Send + Sync>;

/// Runs the whole example on a rayon pool's thread: there, rayon hands out
/// parallel work without allocating.
fn main() -> Result<(), Error> {
    rayon::ThreadPoolBuilder::new().build()?.install(run)
}

fn run() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mesh, control) = match args.first() {
        Some(path) if !path.is_empty() => {
            let data = obj::read_obj(path, Validation::OpenSubdiv)?;
            let control = data.positions().to_owned();
            (data.mesh, control)
        }
        _ => torus(64, 64)?,
    };
    let levels: u32 = args.get(1).map_or(Ok(3), |s| s.parse())?;
    let frames: usize = args.get(2).map_or(Ok(30), |s| s.parse())?;
    let how = match args.get(3).map_or("auto", String::as_str) {
        "auto" => Evaluation::Auto,
        "composed" => Evaluation::Composed,
        "tensor" => Evaluation::Tensor,
        "separable" => Evaluation::Separable,
        other => return Err(format!("unknown evaluation {other:?}: auto, composed, tensor or separable").into()),
    };

    // Once per topology: the plan, then R.
    let t = Instant::now();
    let plan = CatmarkSlak.build(&mesh, levels, Par::Rayon)?;
    let t_plan = t.elapsed();
    let t = Instant::now();
    let mut r = Refinement::tensor_of(&plan, Budget::default(), Par::Rayon)?;
    let t_r = t.elapsed();
    let ev = r.evaluator::<f32>(how, 4, Budget::default(), Par::Rayon)?;
    let tensor_rows = r.tensor_rows().map_or(0, |t| t.closed_rows());
    println!(
        "{} control points -> {} points at level {levels}: plan {t_plan:.1?}, R {t_r:.1?} ({} nonzeros, {tensor_rows} \
         rows in tensor form; the evaluator reads {:.1} MB, {})",
        plan.input_len(),
        plan.output_len(),
        r.composed_nnz().unwrap_or(0),
        ev.matrix_bytes() as f64 / 1e6,
        if ev.is_tensor() { "tensor form" } else { "matrix" },
    );

    // Once: the control data, the output and the evaluator's scratch, reused
    // by every frame.
    let n = plan.input_len();
    let mut x = Array2::<f32>::zeros((n, 4));
    let mut out = Array2::<f32>::zeros((plan.output_len(), 4));
    let mut scratch = vec![0f32; ev.scratch_len(4)];
    let mut times = Vec::with_capacity(frames);
    // Every frame: new control points, one evaluation, no allocation after
    // the first (which checks the result against the plan's evaluation).
    for frame in 0..frames {
        let phase = frame as f64 * 0.2;
        for i in 0..n {
            let (px, py, pz) = (control[(i, 0)], control[(i, 1)], control[(i, 2)]);
            x[(i, 0)] = px as f32;
            x[(i, 1)] = py as f32;
            x[(i, 2)] = (pz + 0.05 * (3.0 * px + phase).sin()) as f32;
        }
        let t = Instant::now();
        ev.apply_with_scratch(x.view(), out.view_mut(), &mut scratch, Par::Rayon);
        times.push(t.elapsed().as_secs_f64());
        if frame == 0 {
            // The same points as refining level by level.
            let mut want = Array2::<f32>::zeros((plan.output_len(), 3));
            plan.eval_f32(x.slice(ndarray::s![.., ..3]), want.view_mut(), Par::Rayon)?;
            let diff = want.iter().zip(out.slice(ndarray::s![.., ..3])).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            let scale = want.iter().fold(1f32, |m, v| m.max(v.abs()));
            println!("frame 0: largest difference from the level-by-level evaluation {diff:.2e} (scale {scale:.2e})");
            assert!(diff <= 1e-5 * scale, "R and the level-by-level evaluation disagree");
        }
    }
    times.sort_by(f64::total_cmp);
    if let (Some(best), Some(median)) = (times.first(), times.get(times.len() / 2)) {
        println!("{frames} frames: best {:.2} ms, median {:.2} ms per frame", best * 1e3, median * 1e3);
    }
    Ok(())
}

/// An `m × n` quad torus and its points.
fn torus(m: u32, n: u32) -> Result<(Mesh, Array2<f64>), Error> {
    let id = |i: u32, j: u32| (i % m) * n + j % n;
    let faces: Vec<[u32; 4]> =
        (0..m).flat_map(|i| (0..n).map(move |j| [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)])).collect();
    let mesh = MeshBuilder::from_faces((m * n) as usize, &faces).build(Par::Rayon)?;
    let tau = std::f64::consts::TAU;
    let points = Array2::from_shape_fn(((m * n) as usize, 3), |(v, k)| {
        let (i, j) = (v as u32 / n, v as u32 % n);
        let (u, w) = (tau * f64::from(i) / f64::from(m), tau * f64::from(j) / f64::from(n));
        let r = 2.0 + 0.75 * w.cos();
        [r * u.cos(), r * u.sin(), 0.75 * w.sin()][k]
    });
    Ok((mesh, points))
}
