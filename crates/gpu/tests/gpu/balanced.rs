use std::collections::BTreeSet;

use ndarray::Array2;
use subla_algebra::spmv::spmv_csr;
use subla_algebra::{CsrMat, Par};
use subla_gpu::balanced::{
    BalancedCsr, GpuRefinement, NNZ_PER_INVOCATION, NNZ_PER_WORKGROUP, chunk_rows, spmv_balanced, spmv_balanced_into,
};
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuBuffer, GpuContext, GpuContextOptions, GpuCsr, GpuError};

use crate::common::{Rng, Timer};

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// An `f64` CSR matrix with the given row lengths (distinct random columns,
/// values in `[0.25, 1)`).
fn with_row_lengths(rng: &mut Rng, lengths: &[usize], ncols: usize) -> CsrMat<f64> {
    let mut ptr = vec![0u32];
    let mut idx = Vec::new();
    let mut vals = Vec::new();
    for &len in lengths {
        assert!(len <= ncols);
        let mut cols = BTreeSet::new();
        while cols.len() < len {
            cols.insert(rng.below(ncols as u32));
        }
        for c in cols {
            idx.push(c);
            vals.push(f64::from(rng.f32_in(0.25, 1.0)));
        }
        ptr.push(idx.len() as u32);
    }
    CsrMat::try_new(lengths.len(), ncols, ptr, idx, vals).expect("valid matrix")
}

/// Very unbalanced row lengths: leading and trailing empty rows, mostly
/// rows of 0, 1 or 2 entries, some of a few, and `long` rows of thousands.
fn unbalanced_lengths(rng: &mut Rng, nrows: usize, long: &[usize]) -> Vec<usize> {
    let mut lengths: Vec<usize> = (0..nrows)
        .map(|_| match rng.below(10) {
            0..=6 => rng.below(3) as usize,
            _ => 3 + rng.below(12) as usize,
        })
        .collect();
    for (k, &len) in long.iter().enumerate() {
        let at = 5 + (k + 1) * (nrows - 10) / (long.len() + 1);
        lengths[at] = len;
    }
    lengths[..3].fill(0);
    lengths[nrows - 3..].fill(0);
    lengths
}

fn to_f32(a: &CsrMat<f64>) -> CsrMat<f32> {
    let vals = a.values().iter().map(|&v| v as f32).collect();
    CsrMat::try_new(a.nrows(), a.ncols(), a.ptr().to_vec(), a.indices().to_vec(), vals).expect("valid matrix")
}

fn random_x(rng: &mut Rng, n: usize, d: usize) -> Array2<f32> {
    Array2::from_shape_fn((n, d), |_| rng.f32_in(0.5, 2.0))
}

/// Checks `gpu` against the CPU `spmv_csr` (identity map) of the `f32`
/// matrix: within 1e-5 relative of the product computed in `f64` from the
/// same `f32` data (the GPU's order of summation differs from the CPU's
/// sequential one, so both are compared with the exact product), and
/// exactly 0 on empty rows.
#[track_caller]
fn assert_matches_cpu(gpu: &[f32], a: &CsrMat<f32>, x: &Array2<f32>) {
    let x64 = x.mapv(f64::from);
    let exact = spmv_csr(a.as_ref(), x64.view(), |&v, _, _| f64::from(v), Par::Seq);
    let cpu32 = spmv_csr(a.as_ref(), x.view(), |&v, _, _| v, Par::Seq);
    let d = x.ncols();
    assert_eq!(gpu.len(), exact.len());
    let ptr = a.ptr();
    let mut worst_gpu = 0.0f64;
    let mut worst_cpu = 0.0f64;
    for (i, ((&g, &e), &c)) in gpu.iter().zip(exact.iter()).zip(cpu32.iter()).enumerate() {
        let row = i / d;
        if ptr[row] == ptr[row + 1] {
            assert_eq!(g.to_bits(), 0, "empty row {row}: y[{i}] = {g}");
            continue;
        }
        let rel = (f64::from(g) - e).abs() / e.abs();
        assert!(rel <= 1e-5, "y[{i}] (row {row}, {} entries): gpu {g} vs exact {e}", ptr[row + 1] - ptr[row]);
        worst_gpu = worst_gpu.max(rel);
        worst_cpu = worst_cpu.max((f64::from(c) - e).abs() / e.abs());
    }
    // The CPU f32 result is within the same bound.
    assert!(worst_cpu <= 1e-5, "cpu f32 spmv_csr is off by {worst_cpu} relative");
    eprintln!("  d = {d}: worst relative error gpu {worst_gpu:.2e}, cpu f32 {worst_cpu:.2e}");
}

fn run_balanced(ctx: &GpuContext, a: &CsrMat<f32>, x: &Array2<f32>) -> Vec<f32> {
    let ga = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
    let gx = GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap();
    spmv_balanced(ctx, &ga, &gx, x.ncols()).unwrap().download(ctx).unwrap()
}

#[test]
fn host_chunk_rows() {
    // Rows of 10, 0, 3, 4, 0 entries: chunks start at 0, 8 and 16.
    assert_eq!(chunk_rows(&[0, 10, 10, 13, 17, 17]), vec![0, 0, 3]);
    // Leading empty rows; a row starting exactly at a chunk.
    assert_eq!(chunk_rows(&[0, 0, 0, 8, 8, 9]), vec![2, 4]);
    assert_eq!(chunk_rows(&[0, 0, 0]), Vec::<u32>::new());
    assert_eq!(chunk_rows(&[0]), Vec::<u32>::new());
    assert_eq!(NNZ_PER_WORKGROUP, 256 * NNZ_PER_INVOCATION);
}

#[test]
fn balanced_matches_cpu_on_unbalanced_rows() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("balanced_matches_cpu_on_unbalanced_rows");
    let mut rng = Rng::new(60);
    let lengths = unbalanced_lengths(&mut rng, 3000, &[2500, 4100, 6000]);
    let a = to_f32(&with_row_lengths(&mut rng, &lengths, 8000));
    assert!(a.nnz() > 5 * NNZ_PER_WORKGROUP, "several workgroups: {}", a.nnz());
    for d in [1, 3, 4, 7] {
        let x = random_x(&mut rng, 8000, d);
        assert_matches_cpu(&run_balanced(ctx, &a, &x), &a, &x);
    }
}

#[test]
fn balanced_is_bitwise_repeatable_and_overwrites_y() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("balanced_is_bitwise_repeatable_and_overwrites_y");
    let mut rng = Rng::new(61);
    let lengths = unbalanced_lengths(&mut rng, 2000, &[3000, 5000]);
    let a = to_f32(&with_row_lengths(&mut rng, &lengths, 6000));
    let ga = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
    for d in [3, 7] {
        let x = random_x(&mut rng, 6000, d);
        let gx = GpuBuffer::upload(ctx, x.as_slice().unwrap()).unwrap();
        let first = spmv_balanced(ctx, &ga, &gx, d).unwrap().download(ctx).unwrap();
        // Garbage in y: every element must be written (empty rows too).
        let mut y = GpuBuffer::upload(ctx, &vec![f32::NAN; 2000 * d]).unwrap();
        for _ in 0..3 {
            spmv_balanced_into(ctx, &ga, &gx, d, &mut y).unwrap();
            assert_eq!(bits(&y.download(ctx).unwrap()), bits(&first), "d = {d}");
        }
        assert_matches_cpu(&first, &a, &x);
    }
}

/// Row lengths putting row ends, row starts and empty rows exactly on chunk
/// and workgroup boundaries, and rows across several workgroups.
fn boundary_cases() -> Vec<(&'static str, Vec<usize>)> {
    let t = NNZ_PER_WORKGROUP;
    let mut short7 = vec![7; 3000];
    short7[0] = 0;
    let mut long_first = vec![9000];
    long_first.extend([1, 0, 2, 3].repeat(500));
    long_first.extend([0; 5]);
    vec![
        ("one row over five workgroups", vec![9000]),
        ("one row, empty rows around", vec![0, 0, 2 * t + 1, 0, 0]),
        (
            "ends and empty rows on workgroup boundaries",
            vec![3, t - 3, 0, 0, t, 0, 2 * t + 5, 1, 0, 7, t - 13, 0, 3 * t, 0, 0],
        ),
        ("rows of 7 over many chunks", short7),
        ("a long first row", long_first),
        ("rows of exactly one chunk", vec![NNZ_PER_INVOCATION; 700]),
    ]
}

#[test]
fn rows_spanning_workgroups() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("rows_spanning_workgroups");
    let mut rng = Rng::new(62);
    for (name, lengths) in boundary_cases() {
        let a = to_f32(&with_row_lengths(&mut rng, &lengths, 10_000));
        for d in [1, 5] {
            eprintln!("{name}: {} rows, {} nonzeros", a.nrows(), a.nnz());
            let x = random_x(&mut rng, 10_000, d);
            assert_matches_cpu(&run_balanced(ctx, &a, &x), &a, &x);
        }
    }
}

#[test]
fn all_rows_empty() {
    let Some(ctx) = context_or_skip() else { return };
    for (nrows, ncols, d) in [(100, 50, 3), (7, 0, 1), (0, 5, 2), (0, 0, 4)] {
        let a = CsrMat::<f32>::zeros(nrows, ncols).unwrap();
        let ga = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
        assert_eq!(ga.workgroups(), 0);
        let gx = GpuBuffer::upload(ctx, &vec![1.5f32; ncols * d]).unwrap();
        let mut y = GpuBuffer::upload(ctx, &vec![f32::NAN; nrows * d]).unwrap();
        spmv_balanced_into(ctx, &ga, &gx, d, &mut y).unwrap();
        assert_eq!(bits(&y.download(ctx).unwrap()), vec![0; nrows * d], "{nrows} x {ncols}");
    }
    // Only the last row holds an entry: the leading empty rows are zeroed.
    let a = CsrMat::try_new(300, 2, [vec![0u32; 300], vec![1]].concat(), vec![1], vec![2.0f32]).unwrap();
    let ga = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
    let gx = GpuBuffer::upload(ctx, &[1.0f32, 10.0, 3.0, 30.0]).unwrap();
    let mut y = GpuBuffer::upload(ctx, &vec![f32::NAN; 600]).unwrap();
    spmv_balanced_into(ctx, &ga, &gx, 2, &mut y).unwrap();
    let mut expected = vec![0.0f32; 600];
    expected[598..].copy_from_slice(&[6.0, 60.0]);
    assert_eq!(bits(&y.download(ctx).unwrap()), bits(&expected));
}

#[test]
fn chunk_rows_on_device_match_host() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("chunk_rows_on_device_match_host");
    let mut rng = Rng::new(63);
    let mut cases: Vec<Vec<usize>> = boundary_cases().into_iter().map(|(_, l)| l).collect();
    cases.push(unbalanced_lengths(&mut rng, 1500, &[2500]));
    cases.push(vec![0; 10]);
    for lengths in cases {
        let a = to_f32(&with_row_lengths(&mut rng, &lengths, 10_000));
        let on_device = BalancedCsr::from_gpu(ctx, GpuCsr::upload(ctx, a.as_ref()).unwrap()).unwrap();
        let on_host = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
        assert_eq!(on_device.chunk_rows().download(ctx).unwrap(), chunk_rows(a.ptr()));
        assert_eq!(on_host.chunk_rows().download(ctx).unwrap(), chunk_rows(a.ptr()));
        assert_eq!(on_device.workgroups(), a.nnz().div_ceil(NNZ_PER_WORKGROUP));
    }
}

#[test]
fn balanced_with_2d_grid_and_small_bindings() {
    let options = GpuContextOptions::default().max_workgroups_per_dimension(4).max_binding_bytes(256 * 1024);
    let Some(ctx) = context_with_options_or_skip(options) else { return };
    let _t = Timer::start("balanced_with_2d_grid_and_small_bindings");
    let mut rng = Rng::new(64);
    // 10 to 12 workgroups on a 4 x 3 grid (surplus workgroups idle).
    let lengths = unbalanced_lengths(&mut rng, 2000, &[2100, 4500, 7000]);
    let a = to_f32(&with_row_lengths(&mut rng, &lengths, 8000));
    let ga = BalancedCsr::upload(&ctx, a.as_ref()).unwrap();
    assert!((10..=12).contains(&ga.workgroups()), "{} workgroups", ga.workgroups());
    let x = random_x(&mut rng, 8000, 3);
    let y = spmv_balanced(&ctx, &ga, &GpuBuffer::upload(&ctx, x.as_slice().unwrap()).unwrap(), 3).unwrap();
    assert_matches_cpu(&y.download(&ctx).unwrap(), &a, &x);
    // x of 8000 x 9 floats (288 000 bytes) exceeds the 256 KiB binding;
    // nothing is dispatched.
    let wide = GpuBuffer::<f32>::zeroed(&ctx, 8000 * 9).unwrap();
    match spmv_balanced(&ctx, &ga, &wide, 9) {
        Err(GpuError::TooLarge { what, limit, limit_value, bytes }) => {
            assert_eq!(
                (what, limit, limit_value, bytes),
                ("balanced spmv x", "max_storage_buffer_binding_size", 256 * 1024, 288_000)
            );
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[test]
#[should_panic(expected = "balanced spmv: x has 5 elements")]
fn balanced_shape_mismatch_panics() {
    let Some(ctx) = context_or_skip() else { panic!("balanced spmv: x has 5 elements (skipped: no adapter)") };
    let a = CsrMat::<f32>::zeros(3, 2).unwrap();
    let ga = BalancedCsr::upload(ctx, a.as_ref()).unwrap();
    let _ = spmv_balanced(ctx, &ga, &GpuBuffer::zeroed(ctx, 5).unwrap(), 1);
}

/// A refinement-like chain: each level triples the vertices, rows of 1 to
/// 9 entries (weights summing to about 1), a few long rows.
fn chain(rng: &mut Rng, sizes: &[usize]) -> Vec<CsrMat<f64>> {
    sizes
        .windows(2)
        .map(|w| {
            let (ncols, nrows) = (w[0], w[1]);
            let mut lengths: Vec<usize> = (0..nrows).map(|_| 1 + rng.below(9) as usize).collect();
            lengths[nrows / 2] = ncols.min(2500);
            let m = with_row_lengths(rng, &lengths, ncols);
            // Normalise the rows (affine combinations, as in subdivision).
            let ptr = m.ptr().to_vec();
            let mut vals = m.values().to_vec();
            for r in 0..nrows {
                let row = &mut vals[ptr[r] as usize..ptr[r + 1] as usize];
                let sum: f64 = row.iter().sum();
                row.iter_mut().for_each(|v| *v /= sum);
            }
            CsrMat::try_new(nrows, ncols, ptr, m.indices().to_vec(), vals).unwrap()
        })
        .collect()
}

/// The CPU applies the matrices in turn, in `f64`.
fn cpu_chain(mats: &[CsrMat<f64>], control: &Array2<f32>) -> Array2<f64> {
    let mut cur = control.mapv(f64::from);
    for m in mats {
        cur = spmv_csr(m.as_ref(), cur.view(), |&v, _, _| v, Par::Seq);
    }
    cur
}

#[track_caller]
fn assert_close_rel(gpu: &[f32], cpu: &Array2<f64>, tol: f64) {
    assert_eq!(gpu.len(), cpu.len());
    for (i, (&g, &c)) in gpu.iter().zip(cpu.iter()).enumerate() {
        assert!((f64::from(g) - c).abs() <= tol * c.abs(), "out[{i}]: gpu {g} vs cpu {c}");
    }
}

#[test]
fn refinement_chain_matches_cpu() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("refinement_chain_matches_cpu");
    let mut rng = Rng::new(65);
    let mats = chain(&mut rng, &[200, 600, 1800, 5400]);
    let refs: Vec<_> = mats.iter().map(CsrMat::as_ref).collect();
    let mut eval = GpuRefinement::from_chain(ctx, &refs, 3).unwrap();
    assert_eq!((eval.input_len(), eval.output_len(), eval.num_matrices(), eval.channels()), (200, 5400, 3, 3));
    assert_eq!(eval.intermediate_rows(), 600 + 1800);
    assert_eq!(eval.nnz(), mats.iter().map(|m| m.nnz() as u64).sum::<u64>());

    let control = random_x(&mut rng, 200, 3);
    let out = eval.apply(ctx, control.as_slice().unwrap(), 3).unwrap();
    // f32 data through three levels against f64.
    assert_close_rel(&out, &cpu_chain(&mats, &control), 1e-5);

    // Device-resident frames: rewrite the control data, reuse both buffers.
    let mut input = GpuBuffer::upload(ctx, control.as_slice().unwrap()).unwrap();
    let mut output = eval.output_buffer(ctx).unwrap();
    eval.apply_device(ctx, &input, &mut output).unwrap();
    assert_eq!(bits(&output.download(ctx).unwrap()), bits(&out), "apply_device equals apply");
    for frame in 0..2 {
        let next = random_x(&mut rng, 200, 3);
        input.write(ctx, next.as_slice().unwrap()).unwrap();
        eval.apply_device(ctx, &input, &mut output).unwrap();
        let got = output.download(ctx).unwrap();
        assert_close_rel(&got, &cpu_chain(&mats, &next), 1e-5);
        eval.apply_device(ctx, &input, &mut output).unwrap();
        assert_eq!(bits(&output.download(ctx).unwrap()), bits(&got), "frame {frame} repeats bitwise");
    }

    // Another channel count reallocates the levels.
    let wide = random_x(&mut rng, 200, 5);
    let out5 = eval.apply(ctx, wide.as_slice().unwrap(), 5).unwrap();
    assert_eq!(eval.channels(), 5);
    assert_close_rel(&out5, &cpu_chain(&mats, &wide), 1e-5);
}

#[test]
fn refinement_of_one_matrix_and_of_an_empty_level() {
    let Some(ctx) = context_or_skip() else { return };
    let mut rng = Rng::new(66);
    let mats = chain(&mut rng, &[100, 300]);
    let mut eval = GpuRefinement::from_chain(ctx, &[mats[0].as_ref()], 1).unwrap();
    let control = random_x(&mut rng, 100, 1);
    let out = eval.apply(ctx, control.as_slice().unwrap(), 1).unwrap();
    // One level: the same as the balanced SpMV of the rounded matrix.
    let a = to_f32(&mats[0]);
    assert_eq!(bits(&out), bits(&run_balanced(ctx, &a, &control)));
    // A level with no entries zeroes everything after it.
    let empty = CsrMat::<f64>::zeros(50, 300).unwrap();
    let mut eval = GpuRefinement::from_chain(ctx, &[mats[0].as_ref(), empty.as_ref()], 2).unwrap();
    let out = eval.apply(ctx, &vec![1.0; 200], 2).unwrap();
    assert_eq!(out, vec![0.0; 100]);
}

#[test]
#[should_panic(expected = "matrix 1 is 9 x 4 but matrix 0 is 3 x 2")]
fn refinement_shape_mismatch_panics() {
    let Some(ctx) = context_or_skip() else { panic!("matrix 1 is 9 x 4 but matrix 0 is 3 x 2 (skipped: no adapter)") };
    let r0 = CsrMat::<f64>::zeros(3, 2).unwrap();
    let r1 = CsrMat::<f64>::zeros(9, 4).unwrap();
    let _ = GpuRefinement::from_chain(ctx, &[r0.as_ref(), r1.as_ref()], 3);
}
