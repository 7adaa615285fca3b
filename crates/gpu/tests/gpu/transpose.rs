use subla_algebra::{CscMat, CsrMat, Par};
use subla_gpu::sparse::{csc_to_csr, csr_to_csc, relayout};
use subla_gpu::testing::{context_or_skip, context_with_options_or_skip};
use subla_gpu::{GpuContextOptions, GpuCsc, GpuCsr};

use crate::common::{Rng, Timer, random_csr};

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn csr_to_csc_equals_cpu_exactly() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("csr_to_csc_equals_cpu_exactly");
    let mut rng = Rng::new(20);
    for (nrows, ncols, per_row) in [(0, 0, 1), (1, 1, 1), (7, 3, 2), (300, 200, 4), (3000, 5000, 6), (5000, 300, 8)] {
        let a = random_csr(&mut rng, nrows, ncols, per_row, -1.0, 1.0);
        let expected = a.to_csc(Par::Seq);
        let gpu = GpuCsr::upload(ctx, a.as_ref()).unwrap();
        let csc = csr_to_csc(ctx, &gpu).unwrap().download(ctx).unwrap();
        assert_eq!(csc.ptr(), expected.ptr(), "{nrows} x {ncols}");
        assert_eq!(csc.indices(), expected.indices(), "{nrows} x {ncols}");
        assert_eq!(bits(csc.values()), bits(expected.values()), "{nrows} x {ncols}");
    }
}

#[test]
fn relayout_is_bitwise_repeatable_and_round_trips() {
    let Some(ctx) = context_or_skip() else { return };
    let _t = Timer::start("relayout_is_bitwise_repeatable_and_round_trips");
    let mut rng = Rng::new(21);
    // Few columns: long columns take the heapsort path of sort_slices.
    let a = random_csr(&mut rng, 4000, 40, 3, -1.0, 1.0);
    let gpu = GpuCsr::upload(ctx, a.as_ref()).unwrap();
    let first = relayout(ctx, &gpu).unwrap().download(ctx).unwrap();
    for _ in 0..3 {
        let again = relayout(ctx, &gpu).unwrap().download(ctx).unwrap();
        assert_eq!(again.indices(), first.indices());
        assert_eq!(bits(again.values()), bits(first.values()));
    }
    let expected = a.to_csc(Par::Seq);
    assert_eq!(first.indices(), expected.indices());
    assert_eq!(bits(first.values()), bits(expected.values()));
    // And back: CSC -> CSR gives the original matrix.
    let csc: CscMat<f32> = first;
    let back = csc_to_csr(ctx, &GpuCsc::upload(ctx, csc.as_ref()).unwrap()).unwrap().download(ctx).unwrap();
    assert_eq!(back.ptr(), a.ptr());
    assert_eq!(back.indices(), a.indices());
    assert_eq!(bits(back.values()), bits(a.values()));
}

#[test]
fn relayout_of_f64_and_transpose_view() {
    let Some(ctx) = context_or_skip() else { return };
    let a = CsrMat::try_new(3, 4, vec![0, 2, 3, 5], vec![0, 3, 1, 0, 2], vec![1.5f64, 2.0, 3.0, 4.0, 5.25]).unwrap();
    let gpu = GpuCsr::upload_f64(ctx, a.as_ref()).unwrap();
    assert_eq!((gpu.nrows(), gpu.ncols(), gpu.nnz()), (3, 4, 5));
    let csc = csr_to_csc(ctx, &gpu).unwrap().download(ctx).unwrap();
    let expected = a.to_csc(Par::Seq).map_values(|v| v as f32);
    assert_eq!(csc, expected);
    // The free transpose: CSR of A is CSC of A^T.
    let at = gpu.transpose();
    assert_eq!((at.nrows(), at.ncols()), (4, 3));
    assert_eq!(at.download(ctx).unwrap().to_csr(Par::Seq).ptr(), a.as_ref().transpose().to_csr(Par::Seq).ptr());
}

#[test]
fn relayout_with_2d_grids() {
    let Some(ctx) = context_with_options_or_skip(GpuContextOptions::default().max_workgroups_per_dimension(6)) else {
        return;
    };
    let _t = Timer::start("relayout_with_2d_grids");
    let mut rng = Rng::new(22);
    let a = random_csr(&mut rng, 2500, 2000, 3, -1.0, 1.0);
    let csc = csr_to_csc(&ctx, &GpuCsr::upload(&ctx, a.as_ref()).unwrap()).unwrap().download(&ctx).unwrap();
    let expected = a.to_csc(Par::Seq);
    assert_eq!(csc.ptr(), expected.ptr());
    assert_eq!(csc.indices(), expected.indices());
    assert_eq!(bits(csc.values()), bits(expected.values()));
}
